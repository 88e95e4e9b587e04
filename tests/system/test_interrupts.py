"""Ctrl-C, SIGTERM and SIGKILL of a real `gozero selfplay` (5x5, uniform priors, a few sims), with the
temporary Prefect server the CLI starts for itself, as a user meets them.

Ctrl-C is SIGINT to the whole process group, as a terminal sends it: the command stops within
seconds with one line and exit 130, leaves finished shards as they are, and a rerun completes with
each game once. Whatever signal ends the CLI, no process it started outlives it."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import psutil
import pyarrow.parquet as pq
import pytest

REPO = Path(__file__).resolve().parents[2]
GAMES, PER_TASK = 12, 2
INTERRUPTED = "interrupted: rerun the same command to resume"


class Cli:
    """`gozero selfplay` in its own session (a terminal's foreground group), output to a log."""

    def __init__(self, data: Path, log: Path, games: int = GAMES, command: tuple[str, ...] | None = None):
        # as a user runs it: no Prefect server configured, Prefect's logging level left to gozero
        unset = ("PREFECT_API_URL", "MLFLOW_TRACKING_URI", "PREFECT_LOGGING_LEVEL")
        env = {k: v for k, v in os.environ.items() if k not in unset}
        env.update(PYTHONPATH=str(REPO), PREFECT_HOME=str(data / "prefect-home"))
        data.mkdir(parents=True, exist_ok=True)
        self.log = log
        with log.open("w") as out:
            command = command or ("selfplay", "--model", "uniform", "--games", str(games), "--games-per-task",
                                  str(PER_TASK), "--sims", "8", "--size", "5", "--workers", "2")
            self.process = subprocess.Popen([sys.executable, "-m", "flows.cli", *command, "--data-dir", str(data)],
                                            cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT,
                                            start_new_session=True)
        self.seen: set[psutil.Process] = set()

    def watch_until(self, happened: Callable[[], bool], timeout: float = 240) -> None:
        """Wait for `happened()`, noting every process the CLI starts meanwhile."""
        deadline = time.monotonic() + timeout
        while not happened():
            assert self.process.poll() is None, f"the run ended first: {self.output()[-2000:]}"
            assert time.monotonic() < deadline, f"not reached in {timeout} s: {self.output()[-2000:]}"
            self.note_children()
            time.sleep(0.05)
        self.note_children()

    def note_children(self) -> None:
        try:
            self.seen.update(psutil.Process(self.process.pid).children(recursive=True))
        except psutil.NoSuchProcess:
            pass

    def signal_group(self, signum: int) -> None:
        os.killpg(self.process.pid, signum)

    def wait(self, timeout: float) -> int | None:
        """The exit status within `timeout` seconds, else None."""
        try:
            return self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None

    def survivors(self, within: float = 10.0) -> list[str]:
        """The processes the CLI started that still run `within` seconds from now (then killed)."""
        deadline = time.monotonic() + within
        alive = [p for p in self.seen if is_alive(p)]
        while alive and time.monotonic() < deadline:
            time.sleep(0.2)
            alive = [p for p in alive if is_alive(p)]
        described = []
        for process in alive:
            try:
                described.append(f"{process.pid} {' '.join(process.cmdline()[:4])}")
                process.kill()
            except psutil.NoSuchProcess:
                pass
        return described

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def kill(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
        self.survivors(0)


def is_alive(process: psutil.Process) -> bool:
    """Still running (a zombie waiting for its parent to reap it has ended)."""
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def generation(data: Path) -> Path:
    return data / "selfplay" / "gen=0"


def finished(data: Path) -> dict[str, bytes]:
    """{shard name: its bytes} of the finished batches (those with a sidecar)."""
    return {p.with_suffix(".parquet").name: p.with_suffix(".parquet").read_bytes()
            for p in sorted(generation(data).glob("shard-s*.json"))}


PROGRESS = re.compile(r"^[\w -]+: [\d,]+/[\d,]+( \(\d+%\))?, \d+ s$")
"""A plain progress line (`flows.cli.common.shard_progress` off a terminal), printed before the Ctrl-C."""


def assert_one_line_and_status(cli: Cli, status: int | None, expected: int, lines: int = 2) -> None:
    output = cli.output()
    assert status == expected, f"exit {status}, expected {expected}: {output[-3000:]}"
    assert output.count(INTERRUPTED) == 1 and f"\n{INTERRUPTED}\n" in f"\n{output}", output[-3000:]  # a line of its own
    assert "Traceback" not in output and "Error" not in output, output[-3000:]
    said = [line for line in output.splitlines() if line.strip() and not PROGRESS.match(line)]
    assert len(said) <= lines, output[-3000:]  # header + that line (progress lines off a terminal aside)


def assert_complete_without_duplicates(data: Path) -> None:
    sidecars = [json.loads(p.read_bytes()) for p in generation(data).glob("shard-s*.json")]
    assert sum(s["games"] for s in sidecars) == GAMES and len(sidecars) == GAMES // PER_TASK
    game_ids = []
    for shard in generation(data).glob("shard-s*.parquet"):
        game_ids += sorted(set(pq.read_table(shard, columns=["game_id"]).column("game_id").to_pylist()))
    assert len(game_ids) == len(set(game_ids)) == GAMES
    assert len(list((generation(data) / "games").glob("*.sgf"))) == GAMES
    assert not [p for p in generation(data).rglob("*") if ".tmp" in p.name]


@pytest.mark.slow
def test_ctrl_c_stops_selfplay_in_seconds_with_one_line_and_reruns_resume_without_duplicates(tmp_path: Path):
    data = tmp_path / "data"
    points: list[tuple[str, Callable[[Path], bool]]] = [
        ("while the Prefect server starts", lambda d: (d / "prefect-home").exists()),
        ("as the workers start, before any game", lambda d: (generation(d) / "plan.json").exists()),
        ("after the first finished batch", lambda d: len(finished(d)) >= 1),
    ]
    for number, (where, reached) in enumerate(points):
        cli = Cli(data, tmp_path / f"run{number}.log")
        try:
            cli.watch_until(lambda reached=reached: reached(data))
            kept = finished(data)
            cli.signal_group(signal.SIGINT)
            started = time.monotonic()
            status = cli.wait(timeout=10)
            seconds = time.monotonic() - started
            assert_one_line_and_status(cli, status, 130)
            assert seconds < 10, f"{where}: {seconds:.1f} s"
            assert cli.survivors() == [], where
            assert {name: finished(data).get(name) for name in kept} == kept, where  # left as they were
        finally:
            cli.kill()
    rerun = Cli(data, tmp_path / "rerun.log")
    try:
        assert rerun.wait(timeout=600) == 0, rerun.output()[-3000:]
    finally:
        rerun.kill()
    assert_complete_without_duplicates(data)


@pytest.mark.slow
def test_a_second_ctrl_c_exits_at_once_and_the_rerun_still_completes(tmp_path: Path):
    data = tmp_path / "data"
    cli = Cli(data, tmp_path / "run.log")
    try:
        cli.watch_until(lambda: (generation(data) / "plan.json").exists() and len(cli.seen) >= 4)
        cli.signal_group(signal.SIGINT)
        time.sleep(0.2)
        cli.signal_group(signal.SIGINT)
        started = time.monotonic()
        status = cli.wait(timeout=10)
        assert time.monotonic() - started < 2.0
        assert status == 130 and cli.output().count(INTERRUPTED) == 1, cli.output()[-3000:]
        assert cli.survivors() == []
    finally:
        cli.kill()
    rerun = Cli(data, tmp_path / "rerun.log")
    try:
        assert rerun.wait(timeout=600) == 0, rerun.output()[-3000:]
    finally:
        rerun.kill()
    assert_complete_without_duplicates(data)


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGKILL], ids=["sigterm", "sigkill"])
def test_no_process_outlives_the_cli_whichever_signal_ends_it(tmp_path: Path, signum: int):
    data = tmp_path / "data"
    cli = Cli(data, tmp_path / "run.log", games=40)
    try:
        # the server, the resource tracker and both workers, with games under way
        cli.watch_until(lambda: (generation(data) / "plan.json").exists() and len(cli.seen) >= 4)
        time.sleep(1.0)
        cli.note_children()
        cli.process.send_signal(signum)  # the CLI only, as `timeout` or a process manager does
        status = cli.wait(timeout=15)
        assert status is not None, "the CLI did not end"
        assert cli.survivors(within=10.0) == []
        if signum == signal.SIGTERM:
            assert status == 128 + signal.SIGTERM, cli.output()[-3000:]
    finally:
        cli.kill()


LOOP = ("loop", "--size", "5", "--generations", "1", "--games", "8", "--sims", "4", "--gate-games", "4",
        "--ladder-opponents", "0", "--workers", "2")


@pytest.mark.slow
def test_ctrl_c_stops_the_loop_in_seconds_and_its_rerun_resumes_self_play_printing_full_lines(tmp_path: Path):
    data = tmp_path / "data"
    games = data / "loops" / "zero-5x5" / "selfplay" / "gen=1"
    steps = data / "loops" / "zero-5x5" / "steps"
    cli = Cli(data, tmp_path / "loop.log", command=LOOP)
    try:
        cli.watch_until(lambda: bool(list(games.glob("shard-s*.json"))), timeout=400)
        cli.signal_group(signal.SIGINT)
        started = time.monotonic()
        status = cli.wait(timeout=10)
        assert time.monotonic() - started < 10
        assert_one_line_and_status(cli, status, 130, lines=2)  # header, that line (the start step adds nothing)
        assert cli.survivors() == []
    finally:
        cli.kill()
    rerun = Cli(data, tmp_path / "rerun.log", command=LOOP)
    try:
        rerun.watch_until(lambda: (steps / "gen-0001-selfplay.json").exists(), timeout=400)
        time.sleep(1.0)  # the poller prints it
        rerun.signal_group(signal.SIGINT)
        assert rerun.wait(timeout=10) == 130
    finally:
        rerun.kill()
    sidecars = [json.loads(p.read_bytes()) for p in games.glob("shard-s*.json")]
    assert sum(s["games"] for s in sidecars) == 8 and len(list((games / "games").glob("*.sgf"))) == 8
    selfplay_line = [line for line in rerun.output().splitlines() if line.startswith("gen 1 selfplay:")]
    assert len(selfplay_line) == 1 and selfplay_line[0].startswith("gen 1 selfplay: 8 games, "), rerun.output()[-3000:]
    assert "…" not in rerun.output()
