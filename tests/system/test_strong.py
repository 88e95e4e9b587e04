"""The strength recipe end to end on 5x5 (`gozero strong`'s flow): GNU Go's games, the supervised
net, its promotion as the loop's generation 0, loop generations, anchor games against GNU Go on the
ladder, the Elo-vs-CPU curve in MLflow; killed during supervised training and inside the loop, and
rerun each time, it ends with the same stages, versions and games as once through."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from benchmarks.paired import paired_rows
from storage import layout, loops, registry, run_dirs
from tasks.app.strong import StrongSettings, recipe_spend
from tasks.ladder import fit
from tasks.strong_curve import curve_points

REPO = Path(__file__).resolve().parents[2]
SETTINGS = dict(name="strong-5x5", size=5, expert=("gnugo-5x5:level=0,games=12",), sl_steps=40, sl_batch_size=32,
                generations=2, games=6, sims=8, gate="off", anchor_games=2, anchor_sims=4, budget_cpu_hours=5.0)
SCRIPT = """
import os, sys
os.environ.setdefault("PREFECT_LOGGING_LEVEL", "CRITICAL")
if __name__ == "__main__":
    from flows.strong import run_strong
    from tasks.app.strong import StrongSettings
    run_strong(StrongSettings(**{settings}), sys.argv[1], workers=1, device="cpu")
"""
pytestmark = [pytest.mark.gnugo, pytest.mark.slow, pytest.mark.timeout(2400)]  # three recipe runs: over 15 min at load 6 (2026-11-27 CI)


def start(data: Path) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if k not in ("MLFLOW_TRACKING_URI", "PREFECT_API_URL")}
    return subprocess.Popen([sys.executable, "-c", SCRIPT.format(settings=repr(SETTINGS)), str(data)], cwd=REPO,
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)


def exit_status(process: subprocess.Popen, timeout: float) -> int:
    """The recipe's exit status; whatever happens meanwhile (a timeout, the test's own), nothing it
    started outlives the wait."""
    try:
        return process.wait(timeout=timeout)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)


def kill_when(data: Path, happened: Callable[[], bool], timeout: float = 600) -> None:
    """Run the recipe until `happened()`, then SIGKILL it and everything it started."""
    process = start(data)
    deadline = time.monotonic() + timeout
    try:
        while process.poll() is None and not happened():
            assert time.monotonic() < deadline, "the recipe did not reach the kill point in time"
            time.sleep(0.05)
        assert process.poll() is None, "the recipe ended before the kill point: " + process.stderr.read().decode()[-2000:]
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def test_a_recipe_killed_in_training_and_in_the_loop_resumes_to_a_complete_run(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, gnugo_path: str):
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    data = tmp_path / "data"
    settings = StrongSettings(**SETTINGS)
    recipe = lambda step, generation=0: loops.read_step(data, settings.recipe, generation, step)
    training = run_dirs.run_dir(data, "strong-5x5-supervised")
    kill_when(data, lambda: bool(run_dirs.checkpoint_files(training)) and recipe("supervised") is None)
    kill_when(data, lambda: loops.read_step(data, "strong-5x5", 1, "train") is not None)
    finish = start(data)
    assert exit_status(finish, timeout=1500) == 0, finish.stderr.read().decode()[-3000:]

    assert recipe("expert")["games"] == 12 and recipe("supervised")["model"] == "models:/gozero-5x5/1"
    versions = {int(v.version): v for v in registry.list_versions("gozero-5x5", data)}
    assert sorted(versions) == [1, 2, 3, 4]  # the supervised net, its copy as generation 0, two candidates
    assert versions[2].tags["promotion_reason"] == "warm-start" and versions[4].tags["generation"] == "2"
    for generation in (0, 1, 2):  # the supervised net and each promoted champion met GNU Go
        assert recipe("anchors", generation)["results"]["gnugo-1"]["games"] == 2
    for generation in (1, 2):  # on the same starts as the supervised net's: a gain pairs game by game
        later, first, _ = paired_rows(data, f"strong-5x5-gen{generation}-vs-gnugo-1", "strong-5x5-gen0-vs-gnugo-1")
        assert len(later) == len(first) == 2
    assert {"gnugo-1", "gozero-5x5/1", "gozero-5x5/3", "gozero-5x5/4"} <= {r.player for r in fit(data, 5, "gnugo-1")}
    points, levels = curve_points(settings, data)
    assert len(points) == 3 and levels == {"gnugo-1": 0.0}
    assert points[0].cpu_hours < points[1].cpu_hours < points[2].cpu_hours
    sidecar = json.loads(next(layout.selfplay_dir(data, 1, "strong-5x5").glob("shard-*.json")).read_text())
    assert sidecar["settings"]["search"] == "gumbel" and sidecar["settings"]["gumbel_scale"] == 0.1
    spent = recipe_spend(loops.read_steps(data, settings.recipe) + loops.read_steps(data, settings.name))
    assert spent.learning > 0 and spent.measuring > 0

    again = start(data)  # a finished recipe reruns without playing or registering anything
    assert exit_status(again, timeout=300) == 0, again.stderr.read().decode()[-3000:]
    assert len(registry.list_versions("gozero-5x5", data)) == 4
