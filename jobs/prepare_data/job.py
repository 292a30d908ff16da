"""The prepare-data job kind: jobs/payload/prepdata.py on one node of a cluster, reading the text and the
tokenizer from data assets or datastore paths and writing token shards to a fixed datastore folder.

    python -m jobs submit prepare-data --stack S --cluster C --text azureml:corpus@latest \\
        --tokenizer azureml:llama-tokenizer@latest --run-name corpus-tok [-- --append-eos TOKEN]

Inputs are uri_folder in ro_mount, output uri_folder in rw_mount: the modes Azure ML mounts folders in
(learn.microsoft.com/azure/machine-learning/how-to-read-write-data-v2, "Modes": ro_mount and download for
inputs, rw_mount and upload for outputs; the training job's checkpoint output is rw_mount too). The output
path is `azureml://datastores/workspaceblobstore/paths/data/<run-name>/` (the datastore URI form of the same
page, "Supported paths"), the `--data` value for `jobs run train` / `jobs submit train`.
One process: prepdata.py is single-threaded and writes one shard sequence.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from jobs import builders
from jobs.builders import BuiltJob, Target
from jobs.errors import UsageError

KIND = "prepare-data"

#: Where the shards land, fixed by run name so `--data` can name it before the job runs.
DATA_URI = "azureml://datastores/workspaceblobstore/paths/data/{run_name}/"

#: prepdata.py flags the job sets itself, and the jobs flag that sets each.
OWNED = {"--tokenizer": "--tokenizer", "--input": "--text", "--out": "--run-name"}

#: prepdata.py's last line (jobs/payload/prepdata.py `prepare`).
WROTE = re.compile(
    r"^wrote (\d+) tokens from (\d+) files to (\S+): (\d+) shard\(s\) of (uint16|uint32) "
    r"\(vocabulary (\d+)\), meta\.json\s*$",
    re.MULTILINE,
)


def build(
    target: Target,
    *,
    text: str | None,
    tokenizer: str | None,
    run_name: str | None,
    environment: str | None = None,
    script_args: tuple[str, ...] = (),
) -> BuiltJob:
    """One node, one process; every missing or malformed flag named at once (UsageError)."""
    problems = []
    for flag, value, what in (
        ("--text", text, "the text: a data asset (azureml:corpus@latest) or folder URI"),
        ("--tokenizer", tokenizer, "the model folder with tokenizer.json (azureml:llama-tokenizer@latest)"),
        ("--run-name", run_name, "it names the output folder data/NAME/ on workspaceblobstore"),
    ):
        if value is None:
            problems.append(f"prepare-data needs {flag}: {what}")
            continue
        try:
            if flag == "--run-name":
                builders.check_run_name(value)
            else:
                builders.check_folder_input(value, flag)
        except UsageError as exc:
            problems.append(str(exc))
    try:
        builders._check_script_args(script_args, owned=OWNED)
    except UsageError as exc:
        problems.append(str(exc))
    if problems:
        raise UsageError("; ".join(problems))
    from azure.ai.ml import Input, Output

    uri = DATA_URI.format(run_name=run_name)
    command = "python prepdata.py --tokenizer ${{inputs.tokenizer}} --input ${{inputs.text}}"
    command += " --out ${{outputs.data}}"
    job = builders.command_job(
        target,
        command=builders._with_script_args(command, script_args),
        nodes=1,
        processes=1,
        environment=environment,
        display_name=f"prepare-data-{run_name}",
        experiment="azml-gpu-prepare-data",
        tags=builders.tags(KIND, target, 1, 1) | {"azml-gpu.run-name": str(run_name)},
        inputs={
            "text": Input(type="uri_folder", path=text, mode="ro_mount"),
            "tokenizer": Input(type="uri_folder", path=tokenizer, mode="ro_mount"),
        },
        outputs={"data": Output(type="uri_folder", path=uri, mode="rw_mount")},
    )
    return BuiltJob(KIND, KIND, job, 1, 1, target.size, {"data_uri": uri})


def verdict(built: BuiltJob, outcome: Any) -> dict[str, Any]:  # a jobs.submit.lifecycle.Outcome
    """What a completed prepare-data job wrote, from prepdata.py's last line in rank 0's log: tokens,
    files, shards, dtype, vocabulary, and the `--data` value for train. `problems` when the line is missing
    or says no token was written."""
    from jobs import ranklogs

    report: dict[str, Any] = {"data": built.extra["data_uri"], "problems": []}
    if outcome.status != "Completed":
        return report
    found = None
    if outcome.logs:
        ranks, _ = ranklogs.rank_logs(Path(outcome.logs))
        if 0 in ranks:
            found = WROTE.search(ranklogs.read(ranks[0]))
    if found is None:
        report["problems"].append("rank 0's log has no `wrote N tokens ...` line from prepdata.py")
        return report
    tokens, files, _, shards, dtype, vocab = found.groups()
    report |= {"tokens": int(tokens), "files": int(files), "shards": int(shards), "dtype": dtype}
    report["vocab_size"] = int(vocab)
    if report["tokens"] < 1 or report["shards"] < 1:
        report["problems"].append(
            f"prepdata.py wrote {tokens} tokens in {shards} shards; nothing to train on"
        )
    return report
