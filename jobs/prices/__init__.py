"""`python -m jobs prices [--refresh] [--region R ...] [--out FILE] [--json]`: the GPU VM price file.
With --refresh, fetch the catalog's GPU sizes (Linux pay-as-you-go, Spot and Low Priority meters) from
the Azure Retail Prices API into FILE (--out, else $AZML_GPU_PRICES); without it, say what the file holds and
how old it is. Exit 0, 2 bad input (no file named, a bad file), 4 the API query failed."""

from __future__ import annotations

import argparse
import json

from jobs.errors import EXIT_QUERY, UsageError, error_detail, fail, guarded


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "prices",
        help="fetch (--refresh) or show the GPU VM price file the gate and `jobs plan` read",
        description=__doc__,
        allow_abbrev=False,
    )
    p.add_argument("--refresh", action="store_true", help="fetch the prices from the Azure Retail Prices API")
    p.add_argument(
        "--region",
        action="append",
        default=[],
        metavar="R",
        help="only this region (repeatable; default: all)",
    )
    p.add_argument(
        "--out", "--prices", dest="out", metavar="FILE", help="the price file (default $AZML_GPU_PRICES)"
    )
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=run)


@guarded
def run(args: argparse.Namespace) -> int:
    from jobs.regions import check_region
    from vmsizes import prices

    problems = []
    regions = []
    for value in args.region:
        try:
            regions.append(check_region(value, "--region"))
        except UsageError as exc:
            problems.append(str(exc))
    if args.region and not args.refresh:
        problems.append("--region chooses what --refresh fetches; pass --refresh too")
    path = prices.locate(args.out)
    if path is None:
        problems.append(f"no price file named: pass --out FILE or set {prices.ENV}")
    if problems:
        raise UsageError("; ".join(problems))
    assert path is not None
    if args.refresh:
        from jobs.prices import retailprices
        from jobs.progress import stderr_console

        try:
            with stderr_console().status("asking the Azure Retail Prices API for the GPU sizes' prices"):
                fetched = retailprices.fetch(prices.gpu_size_names(), regions or None)
        except Exception as exc:  # noqa: BLE001 - any failure of the query is exit 4 with its cause
            return fail(
                f"Retail Prices query failed: {error_detail(exc)}", EXIT_QUERY, args.json, file=str(path)
            )
        prices.dump(fetched, path)
    try:
        loaded = prices.load(path)
    except prices.PriceFileError as exc:
        raise UsageError(str(exc)) from None
    sizes = {s for by_size in loaded.prices.values() for s in by_size}
    summary = {
        "file": str(path),
        "fetched": loaded.fetched,
        "age_days": None if (age := loaded.age_days()) is None else round(age, 1),
        "currency": loaded.currency,
        "source": loaded.source,
        "regions": len(loaded.prices),
        "sizes": len(sizes),
        "refreshed": bool(args.refresh),
    }
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        verb = "wrote" if args.refresh else "read"
        print(
            f"{verb} {path}: {len(sizes)} GPU sizes in {len(loaded.prices)} regions; {loaded.describe()}\n"
            f"refresh with `python -m jobs prices --refresh --out {path}`"
        )
    return 0
