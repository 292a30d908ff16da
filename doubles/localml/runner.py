"""Runs each submitted command job on this machine, the way an AmlCompute cluster would.

For a job: download its code version from Azurite (a job without `code:` runs in an empty folder), resolve
``${{inputs.x}}`` / ``${{outputs.y}}`` (datastore URIs ``azureml://datastores/<ds>/paths/<p>`` map to folders
of the session that persist across jobs; an input's blobs in the datastore's Azurite container, such as the
local folder or file azure-ai-ml uploaded for it, are copied there first), run the command with
``jobs.local.launcher.launch`` as instance_count x process_count_per_instance processes (Azure ML's PyTorch
variables plus the job's environment variables; ``python`` is this interpreter), upload every rank's log to
the artifact store as ``user_logs/std_log_process_<N>.txt`` while it runs, upload what the command wrote to
``./outputs`` as the run's ``outputs/`` artifacts when it ends, and move the job through
Queued -> Running -> Completed / Failed / Canceled.

A ``rw_mount`` output (mode ReadWriteMount, the default of a uri_folder output) is not a plain folder:
every node gets its own ``doubles.localml.blobfs`` mount of the datastore folder, with blobfuse2's semantics
(doubles/localml/blobfs.py), at ``<job>/nodes/node-<N>/outputs/<name>``; ranks start through
``doubles/localml/nodeexec.py``, which points the binding at their node's mount. At job end each mount gives
pending uploads at most the job's ``DATASET_UNMOUNT_TIMEOUT_SECONDS`` (Azure ML's default 30 s); on a
cancel, that time starts after the launcher's 10 s grace.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import shlex
import signal
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from doubles.localml.blobs import ARTIFACT_CONTAINER, DATASTORES
from doubles.localml.mount import DEFAULT_UNMOUNT_TIMEOUT_S, BlobMount, MountOptions
from doubles.localml.nodeexec import PLACEHOLDER
from doubles.localml.store import Job, now_iso

if TYPE_CHECKING:
    from doubles.localml.blobs import Blobs
    from doubles.localml.store import Store

log = logging.getLogger("doubles.localml.runner")

DATASTORE_URI = re.compile(r"^azureml://datastores/(?P<ds>[^/]+)/paths/(?P<path>.*)$")
BINDING = re.compile(r"\$\{\{\s*(inputs|outputs)\.([A-Za-z0-9_]+)\s*\}\}")
SHELL_CHARS = set("|&;<>()$`\\\"'*?[]#~=%{}\n")
LOG_UPLOAD_EVERY_S = 1.0
#: The working directory's folder Azure ML uploads to the run's artifacts as `outputs/` at the end of the run.
OUTPUTS_FOLDER = "outputs"
FOLDER_TYPES = {"uri_folder", "uri_file", "custom_model", "mlflow_model"}
NODEEXEC = Path(__file__).resolve().parent / "nodeexec.py"
#: jobs.local.launcher's default grace between SIGTERM and SIGKILL; a cancel's unmount starts after it.
LAUNCHER_GRACE_S = 10.0


class Runner:
    def __init__(self, store: Store, blobs: Blobs) -> None:
        self.store = store
        self.blobs = blobs
        #: How every rw_mount behaves (tests slow uploads down to stop a job in the middle of one).
        self.mount_options = MountOptions()
        self.mounts: dict[str, list[tuple[int, BlobMount]]] = {}  # job name -> (node, mount)

    # --- at submission ------------------------------------------------------------------------

    def check(self, props: dict[str, Any]) -> str | None:
        """Why this job cannot run here, or None. Answered as a 400 to the PUT."""
        if props.get("jobType") != "Command":
            return f"localml runs command jobs only, not jobType {props.get('jobType')!r}"
        dist = props.get("distribution") or {}
        if dist and dist.get("distributionType") != "PyTorch":
            return f"localml runs PyTorch distribution only, not {dist.get('distributionType')!r}"
        for kind in ("inputs", "outputs"):
            for name, spec in (props.get(kind) or {}).items():
                spec = dict(spec or {})
                if kind == "inputs" and spec.get("uri"):
                    resolved, why = self.store.data_uri(spec["uri"])
                    if why:
                        return f"inputs.{name}: {why}"
                    spec["uri"] = resolved or spec["uri"]
                problem = _binding_problem(kind, name, spec)
                if problem:
                    return problem
        return None

    def complete(self, ws_id: str, name: str, props: dict[str, Any]) -> dict[str, Any]:
        """What the service fills in: output URIs, the default artifact output, studio link."""
        props = dict(props)
        outputs = {k: dict(v) for k, v in (props.get("outputs") or {}).items()}
        for out_name, spec in outputs.items():
            if not spec.get("uri"):
                spec["uri"] = f"azureml://datastores/workspaceblobstore/paths/azureml/{name}/{out_name}/"
        outputs["default"] = {
            "jobOutputType": "uri_folder",
            "mode": "ReadWriteMount",
            "uri": f"azureml://datastores/workspaceartifactstore/ExperimentRun/dcid.{name}",
        }
        props["outputs"] = outputs
        props["services"] = {
            "Studio": {
                "jobServiceType": "Studio",
                "status": "Active",
                "endpoint": f"https://ml.azure.com/runs/{name}?wsid={ws_id}",
            }
        }
        props.setdefault("experimentName", "Default")
        return props

    def start(self, job: Job) -> None:
        job.thread = threading.Thread(
            target=self._run, args=(job,), name=f"localml-job-{job.name}", daemon=True
        )
        job.thread.start()

    # --- the run ------------------------------------------------------------------------------

    def _run(self, job: Job) -> None:
        workdir = self.store.root / "jobs" / job.name
        logs_dir = workdir / "logs"
        uploader = _LogUploader(self.blobs, logs_dir, job.artifact_prefix)
        job_env = job.properties.get("environmentVariables") or {}
        unmount_s = _unmount_timeout(job_env)
        try:
            code_dir = workdir / "code"
            code_dir.mkdir(parents=True, exist_ok=True)
            if job.properties.get("codeId"):  # optional in the REST spec (CommandJob.codeId)
                self._download_code(job, code_dir)
            # The run's ./outputs folder: Azure ML makes it in the working directory and uploads what is in
            # it to the run's artifacts (how-to-save-write-experiment-files.md, "Where to write files";
            # azureml-examples cli/jobs/basics/hello-world-output.yml writes into it without creating it).
            (code_dir / OUTPUTS_FOLDER).mkdir(exist_ok=True)
            uploader.folders[code_dir / OUTPUTS_FOLDER] = OUTPUTS_FOLDER
            dist = job.properties.get("distribution") or {}
            nodes = int((job.properties.get("resources") or {}).get("instanceCount") or 1)
            procs = int(dist.get("processCountPerInstance") or 1)
            mounted: dict[str, Path] = {}
            command = self._bind(job, workdir / "nodes", mounted)
            argv = _argv(command)
            if mounted:
                self._mount(job, workdir / "nodes", nodes, mounted)
                argv = [sys.executable, str(NODEEXEC), str(workdir / "nodes"), "--", *argv]
                threading.Thread(
                    target=self._unmount_on_cancel,
                    args=(job, unmount_s),
                    daemon=True,
                    name=f"localml-unmount-{job.name}",
                ).start()
            # One intra-op thread per rank unless the job says otherwise (torchrun's default when it
            # starts several processes per node): N ranks share this machine's cores.
            env = {
                "OMP_NUM_THREADS": "1",
                **job_env,
                "AZUREML_RUN_ID": job.name,
                "AZUREML_EXPERIMENT_NAME": str(job.properties["experimentName"]),
                "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
            }
            if job.stop_event.is_set():
                self._finish(job, "Canceled", None, uploader)
                return
            job.status, job.start_time = "Running", now_iso()
            log.info("job %s: running %s as %d x %d processes", job.name, argv, nodes, procs)
            uploader.start()
            from jobs.local.launcher import launch

            code = launch(
                argv,
                nodes,
                procs,
                logs_dir,
                env=env,
                cwd=code_dir,
                stream_rank0=False,
                stop_event=job.stop_event,
            )
            job.exit_code = code
            if job.stop_event.is_set():
                self._finish(job, "Canceled", None, uploader)
            elif code == 0:
                self._finish(job, "Completed", None, uploader)
            else:
                self._finish(job, "Failed", f"command exited with code {code}; see user_logs/", uploader)
        except Exception as exc:  # the job fails, the service keeps serving
            log.exception("job %s failed to run", job.name)
            self._finish(job, "Failed", f"localml could not run the job: {exc}", uploader)

    def _finish(self, job: Job, status: str, err: str | None, uploader: _LogUploader) -> None:
        self._unmount(job, _unmount_timeout(job.properties.get("environmentVariables") or {}))
        uploader.stop()
        job.error = job.system_error or err
        job.end_time = now_iso()
        job.status = status
        job.done.set()
        log.info("job %s: %s%s", job.name, status, f" ({err})" if err else "")

    def _download_code(self, job: Job, dest: Path) -> None:
        code_id = job.properties["codeId"]
        m = re.search(r"/codes/([^/]+)/versions/([^/]+)$", code_id)
        key = (job.ws_id.lower(), m.group(1), m.group(2)) if m else None
        code = self.store.codes.get(key) if key else None
        if code is None:
            raise RuntimeError(f"code version {code_id} is not registered in this workspace")
        n = self.blobs.download_prefix(code.body["properties"]["codeUri"], dest)
        if n == 0:
            raise RuntimeError(f"no files under {code.body['properties']['codeUri']}")

    # --- rw_mount outputs --------------------------------------------------------------------

    def _mount(self, job: Job, nodes_dir: Path, nodes: int, mounted: dict[str, Path]) -> None:
        """One blobfs mount per node and rw_mount output: node N sees the store at its own path."""
        made = self.mounts.setdefault(job.name, [])
        for node in range(nodes):
            for name, store in mounted.items():
                node_dir = nodes_dir / f"node-{node}"
                mount = BlobMount(
                    store, node_dir / "outputs" / name, node_dir / f"blobfs-{name}", self.mount_options
                )
                made.append((node, mount.start()))
        log.info("job %s: %d rw_mount output(s) mounted on %d node(s)", job.name, len(mounted), nodes)

    def _unmount(self, job: Job, timeout_s: float) -> None:
        for node, mount in self.mounts.pop(job.name, []):
            if not mount.unmount(timeout_s):
                log.warning(
                    "job %s: node %d: uploads still pending after DATASET_UNMOUNT_TIMEOUT_SECONDS=%g "
                    "were dropped (%s)",
                    job.name,
                    node,
                    timeout_s,
                    mount.mountpoint,
                )

    def _unmount_on_cancel(self, job: Job, timeout_s: float) -> None:
        """A cancelled job's ranks may sit in close() while it uploads (the kernel waits for a FUSE
        flush, even for a killed process): after the launcher's grace, unmount with the timeout."""
        while not job.done.is_set():
            if job.stop_event.wait(0.5):
                if not job.done.wait(LAUNCHER_GRACE_S):
                    self._unmount(job, timeout_s)
                return

    def lose_node(self, job_name: str, node: int) -> int:
        """The node is gone, as when a VM is lost: SIGKILL its ranks and its mounts. For tests.

        Returns how many rank processes were killed. The job then fails the way a lost node makes it
        fail: its other ranks lose a peer.
        """
        pids_dir = self.store.root / "jobs" / job_name / "nodes" / f"node-{node}" / "pids"
        killed = 0
        for pid_file in sorted(pids_dir.glob("*")) if pids_dir.exists() else []:
            with contextlib.suppress(ProcessLookupError, ValueError):
                os.kill(int(pid_file.name), signal.SIGKILL)
                killed += 1
        for n, mount in self.mounts.get(job_name, []):
            if n == node:
                mount.lose()
        return killed

    def _bind(self, job: Job, nodes_dir: Path, mounted: dict[str, Path]) -> str:
        """The command with its bindings substituted; rw_mount outputs go to `mounted` (name -> store)."""
        inputs = job.properties.get("inputs") or {}
        outputs = job.properties.get("outputs") or {}

        def value(match: re.Match[str]) -> str:
            kind, name = match.group(1), match.group(2)
            spec = (inputs if kind == "inputs" else outputs).get(name)
            if spec is None:
                binding = "${{" + f"{kind}.{name}" + "}}"
                raise RuntimeError(f"the command uses {binding} but the job has no such {kind[:-1]}")
            if spec.get("jobInputType") == "literal":
                return str(spec.get("value", ""))
            uri = spec["uri"]
            if kind == "inputs":  # a data asset's version: the datastore path it was registered with
                uri = self.store.data_uri(uri)[0] or uri
            path = self._local(uri)
            if kind == "inputs":
                self._fetch(uri, path)
            if kind == "outputs":
                path.mkdir(parents=True, exist_ok=True)
                if spec.get("mode", "ReadWriteMount") == "ReadWriteMount":
                    mounted[name] = path
                    return str(nodes_dir / f"node-{PLACEHOLDER}" / "outputs" / name)
            return str(path)

        return BINDING.sub(value, str(job.properties.get("command", "")))

    def _fetch(self, uri: str, dest: Path) -> None:
        """An input's blobs from the datastore's container into its session folder. On Azure ML the
        datastore's container is where an input is read from; localml's datastores are session folders
        (docs/localml.md "Where the blobs live"), so what a client wrote through the Blob API (azure-ai-ml
        uploads a local input to the default datastore, `LocalUpload/<hash>/<name>`:
        `_artifact_utilities._upload_and_generate_remote_uri`) is copied there before the job reads it."""
        m = DATASTORE_URI.match(uri)
        container = DATASTORES.get(m.group("ds")) if m else None
        if m and container:
            n = self.blobs.download_path(container, m.group("path"), dest)
            log.info("input %s: %d blob(s) from container %s", uri, n, container)

    def _local(self, uri: str) -> Path:
        m = DATASTORE_URI.match(uri)
        if not m:
            raise RuntimeError(f"{uri}: localml maps only azureml://datastores/<ds>/paths/<path> URIs")
        return self.store.datastore_path(m.group("ds"), m.group("path"))


def _unmount_timeout(env: dict[str, Any]) -> float:
    """The job's DATASET_UNMOUNT_TIMEOUT_SECONDS, else Azure ML's default (how-to-read-write-data-v2.md)."""
    try:
        return max(0.0, float(env.get("DATASET_UNMOUNT_TIMEOUT_SECONDS", DEFAULT_UNMOUNT_TIMEOUT_S)))
    except (TypeError, ValueError):
        return DEFAULT_UNMOUNT_TIMEOUT_S


def _binding_problem(kind: str, name: str, spec: dict[str, Any]) -> str | None:
    typ = spec.get("jobInputType") if kind == "inputs" else spec.get("jobOutputType")
    if kind == "inputs" and typ == "literal":
        return None
    if typ not in FOLDER_TYPES:
        return f"{kind}.{name}: localml supports uri_folder / uri_file {kind} only, not {typ!r}"
    uri = spec.get("uri")
    if kind == "inputs" and not uri:
        return f"inputs.{name}: no uri"
    if uri and not DATASTORE_URI.match(uri):
        return (
            f"{kind}.{name}: {uri!r} is not a datastore path; localml maps only "
            "azureml://datastores/<datastore>/paths/<path>"
        )
    return None


def _argv(command: str) -> list[str]:
    """A simple command runs directly (``python`` -> this interpreter); anything else through bash."""
    if not command.strip():
        raise RuntimeError("the job has an empty command")
    if SHELL_CHARS.isdisjoint(command):
        argv = shlex.split(command)
        if argv[0] in ("python", "python3"):
            argv[0] = sys.executable
        return argv
    return ["bash", "-c", command]


class _LogUploader:
    """Copies the job's log folder to the artifact store every second while the job runs, then once more."""

    def __init__(self, blobs: Blobs, logs_dir: Path, prefix: str) -> None:
        self.blobs, self.logs_dir, self.prefix = blobs, logs_dir, prefix
        self._sizes: dict[Path, int] = {}
        #: Folders uploaded once, when the job ends: local folder -> blob prefix under `prefix`.
        self.folders: dict[Path, str] = {}
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, daemon=True, name="localml-logs")
        self._thread.start()

    def _loop(self) -> None:
        while not self._stop.wait(LOG_UPLOAD_EVERY_S):
            self.sync()

    def sync(self) -> None:
        if not self.logs_dir.exists():
            return
        for path in sorted(p for p in self.logs_dir.rglob("*") if p.is_file()):
            size = path.stat().st_size
            if self._sizes.get(path) == size:
                continue
            rel = path.relative_to(self.logs_dir).as_posix()
            self.blobs.upload_file(ARTIFACT_CONTAINER, f"{self.prefix}/{rel}", path)
            self._sizes[path] = size

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
        try:
            self.sync()
            for folder, name in self.folders.items():
                self.blobs.upload_folder(ARTIFACT_CONTAINER, f"{self.prefix}/{name}", folder)
        except Exception:  # logs are best effort once the job is over
            log.exception("final log upload failed")
