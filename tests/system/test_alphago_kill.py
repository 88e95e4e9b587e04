"""`gozero alphago` SIGKILLed in the middle of its RL stage and run again with the same command:
the rerun finishes, every family is registered exactly once (the RL snapshots once per
iteration), and the stages that had finished are not run again. tests/flows/test_alphago.py
crashes each stage with planted exceptions; this is the real thing, a process group killed -9."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from storage import layout, loops, registry, run_dirs
from tests.helpers import build_uct_dataset

REPO = Path(__file__).resolve().parents[2]
NAME, DATASET = "agkill5", "uct5"
DONE_BEFORE_KILL = ("sl", "rollout")
COMMAND = ["-m", "flows.cli", "alphago", "--size", "5", "--preset", "tiny", "--stages", "sl,rollout,rl,value",
           "--dataset", DATASET, "--name", NAME, "--sl-steps", "10", "--rollout-steps", "5", "--iterations", "4",
           "--snapshot-every", "2", "--games-per-iteration", "2", "--check-games", "2", "--value-games", "4",
           "--value-heldout-games", "2", "--value-steps", "5", "--workers", "1", "--device", "cpu"]


def start(data: Path, api_url: str, log: Path) -> subprocess.Popen:
    """The CLI in its own process group, on the session's Prefect server and the data dir's MLflow;
    its output goes to `log` (a pipe nobody reads could fill and stall it)."""
    env = {k: v for k, v in os.environ.items() if k != "MLFLOW_TRACKING_URI"}
    env.update(PREFECT_API_URL=api_url, PYTHONPATH=str(REPO))
    with log.open("w") as out:
        return subprocess.Popen([sys.executable, *COMMAND, "--data-dir", str(data)], cwd=REPO, env=env,
                                stdout=out, stderr=subprocess.STDOUT, start_new_session=True)


def kill_when(process: subprocess.Popen, happened: Callable[[], bool], log: Path, timeout: float = 300) -> None:
    """SIGKILL the process group as soon as `happened()`; fail if the run ends or times out first."""
    deadline = time.monotonic() + timeout
    try:
        while not happened():
            assert process.poll() is None, f"the run ended before the kill point: {log.read_text()[-2000:]}"
            assert time.monotonic() < deadline, "the run did not reach the kill point in time"
            time.sleep(0.02)
        os.killpg(process.pid, signal.SIGKILL)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def stage_records(data: Path) -> dict[str, dict]:
    """The record of each finished stage (its facts, with its seconds and registered versions)."""
    steps = {stage: loops.read_step(data, NAME, 0, stage) for stage in ("sl", "rollout", "rl", "value")}
    return {stage: record for stage, record in steps.items() if record is not None}


def test_a_pipeline_killed_in_its_rl_stage_resumes_without_redoing_or_registering_twice(
        tmp_path: Path, prefect_harness, monkeypatch: pytest.MonkeyPatch):
    from prefect.settings import PREFECT_API_URL

    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    data = tmp_path / "data"
    build_uct_dataset(tmp_path / "sgf", layout.dataset_dir(data, DATASET), 12, size=5)
    rl_run = run_dirs.run_dir(data, f"{NAME}-rl")
    mid_rl = lambda: bool(run_dirs.checkpoint_files(rl_run)) and loops.read_step(data, NAME, 0, "rl") is None  # noqa: E731
    kill_when(start(data, PREFECT_API_URL.value(), tmp_path / "killed.log"), mid_rl, tmp_path / "killed.log")
    before = stage_records(data)
    assert tuple(before) == DONE_BEFORE_KILL
    sl_result = run_dirs.read_result(run_dirs.run_dir(data, f"{NAME}-policy"))

    rerun = start(data, PREFECT_API_URL.value(), tmp_path / "rerun.log")
    assert rerun.wait(timeout=300) == 0, (tmp_path / "rerun.log").read_text()[-3000:]
    output = (tmp_path / "rerun.log").read_text()  # a file, not a terminal: plain lines, a final newline
    assert "stage rl done:" in output and "stage value done:" in output and "stage sl done:" not in output
    assert output.endswith("\n")

    after = stage_records(data)
    assert tuple(after) == ("sl", "rollout", "rl", "value")
    assert {stage: after[stage] for stage in DONE_BEFORE_KILL} == before  # finished stages were not run again
    assert run_dirs.read_result(run_dirs.run_dir(data, f"{NAME}-policy")) == sl_result
    assert after["rl"]["resumed_from"] == 2  # RL went on from its checkpoint, not from iteration 0
    versions = {family: registry.list_versions(f"gozero-5x5-{family}", data)
                for family in ("policy", "rollout", "rl", "value")}
    assert {family: len(found) for family, found in versions.items()} == {"policy": 1, "rollout": 1, "rl": 3,
                                                                          "value": 1}
    assert sorted(v.tags["iteration"] for v in versions["rl"]) == ["0", "2", "4"]
