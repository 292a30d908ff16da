"""The prepare-data job kind (jobs/prepare_data/job.py) through `render`: its YAML, loaded by azure-ai-ml's
own `load_job`, gives the REST body Azure ML receives (one node, one process, prepdata.py's command, the
two read-only inputs, the output fixed at data/RUN_NAME/ on workspaceblobstore); bad flags exit 2 naming
every one at once. And prepdata.py's last line read back as submit's verdict."""

from __future__ import annotations

import pytest

from jobs.builders import BuiltJob
from jobs.cli import main
from jobs.prepare_data.job import verdict
from jobs.submit.lifecycle import Outcome

from ..render_util import FIXTURE, render, rest_body

FLAGS = ("--cluster", "h100-x4", "--text", "azureml:corpus@latest", "--tokenizer", "azureml:llama-tok:2")


def test_one_node_one_process_reading_two_mounts_and_writing_a_fixed_folder(tmp_path):
    body = rest_body(render(tmp_path, "prepare-data", *FLAGS, "--run-name", "corpus-tok"))
    # one process on one node of an 8-GPU size, not the size's default of 8
    assert body["distribution"] == {"distributionType": "PyTorch", "processCountPerInstance": 1}
    assert body["resources"]["instanceCount"] == 1
    assert body["computeId"] == "h100-x4"
    assert body["command"] == (
        "python prepdata.py --tokenizer ${{inputs.tokenizer}} --input ${{inputs.text}} "
        "--out ${{outputs.data}}"
    )
    text, tok = body["inputs"]["text"], body["inputs"]["tokenizer"]
    assert (text["jobInputType"], text["mode"]) == ("uri_folder", "ReadOnlyMount")
    assert text["uri"].endswith("corpus@latest")  # the SDK drops the azureml: prefix in the REST body
    assert (tok["jobInputType"], tok["mode"]) == ("uri_folder", "ReadOnlyMount")
    assert tok["uri"].endswith("llama-tok:2")
    assert body["outputs"]["data"] == {
        "uri": "azureml://datastores/workspaceblobstore/paths/data/corpus-tok/",
        "mode": "ReadWriteMount",
        "jobOutputType": "uri_folder",
    }
    assert body["tags"]["azml-gpu.kind"] == "prepare-data"
    assert body["environmentId"].startswith("azureml://registries/azureml/environments/acpt-pytorch")


def test_script_arguments_after_the_double_dash_reach_prepdata(tmp_path):
    path = tmp_path / "j.yml"
    argv = ["render", "prepare-data", *FLAGS, "--run-name", "c1", "--outputs", FIXTURE, "--out", str(path)]
    assert main([*argv, "--", "--append-eos", "<|end_of_text|>"]) == 0
    body = rest_body(path)
    assert body["command"].endswith("--out ${{outputs.data}} --append-eos '<|end_of_text|>'")


@pytest.mark.parametrize(
    ("argv", "messages"),
    [
        (
            ["--cluster", "h100-x4"],
            [
                "prepare-data needs --text",
                "prepare-data needs --tokenizer",
                "prepare-data needs --run-name",
            ],
        ),
        ([*FLAGS, "--run-name=-bad"], ["--run-name '-bad': use 1-100 letters"]),
        (
            ["--cluster", "h100-x4", "--text", "azureml:corpus", "--tokenizer", "", "--run-name", "r"],
            ["--text azureml:corpus: not a data asset reference", "--tokenizer: empty"],
        ),
        (
            # the shape flags and a missing --run-name, in one message
            [*FLAGS, "--data", "azureml:x:1", "--nodes", "2", "--steps", "5"],
            ["--data", "--nodes", "--steps", ": not for prepare-data", "drop them", "needs --run-name"],
        ),
        ([*FLAGS, "--run-name", "r", "--", "--out", "/x"], ["the job sets --out itself; use --run-name"]),
        ([*FLAGS, "--run-name", "r", "--", "--inp", "/x"], ["(an abbreviation of --input)", "use --text"]),
    ],
)
def test_bad_flags_exit_2_naming_each(tmp_path, capsys, argv, messages):
    out = tmp_path / "x.yml"
    assert main(["render", "prepare-data", "--outputs", FIXTURE, "--out", str(out), *argv]) == 2
    err = capsys.readouterr().err
    for message in messages:
        assert message in err
    assert "Traceback" not in err
    assert not out.exists()


def test_text_and_tokenizer_are_refused_on_other_kinds(tmp_path, capsys):
    argv = ["render", "train", "--cluster", "h100-x4", "--run-name", "r", "--text", "azureml:c:1"]
    assert main([*argv, "--outputs", FIXTURE, "--out", str(tmp_path / "x.yml")]) == 2
    assert "--text is for prepare-data jobs, not train; drop it" in capsys.readouterr().err


def test_run_refuses_prepare_data(capsys):
    argv = ["run", "prepare-data", *FLAGS, "--run-name", "r", "--outputs", FIXTURE, "--logs", "/nonexistent"]
    assert main(argv) == 2
    assert "use `python -m jobs submit prepare-data`" in capsys.readouterr().err


def _logs(tmp_path, text: str):
    log = tmp_path / "logs" / "user_logs" / "std_log_process_0.txt"
    log.parent.mkdir(parents=True)
    log.write_text(text)
    return str(tmp_path / "logs")


BUILT = BuiltJob("prepare-data", "prepare-data", None, 1, 1, "x", {"data_uri": "azureml://d/"})


def test_verdict_reads_prepdatas_line(tmp_path):
    line = "wrote 1234 tokens from 3 files to /mnt/out: 2 shard(s) of uint32 (vocabulary 128256), meta.json\n"
    got = verdict(BUILT, Outcome("p", "j", "Completed", 0, logs=_logs(tmp_path, "azml-gpu rank=0\n" + line)))
    assert got == {
        "data": "azureml://d/",
        "problems": [],
        "tokens": 1234,
        "files": 3,
        "shards": 2,
        "dtype": "uint32",
        "vocab_size": 128256,
    }


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("nothing here\n", "no `wrote N tokens ...` line"),
        ("wrote 0 tokens from 1 files to /o: 0 shard(s) of uint16 (vocabulary 9), meta.json\n", "nothing to"),
    ],
)
def test_verdict_problems(tmp_path, text, problem):
    got = verdict(BUILT, Outcome("p", "j", "Completed", 0, logs=_logs(tmp_path, text)))
    assert len(got["problems"]) == 1 and problem in got["problems"][0]
