"""A step records the CPU its whole process tree spent: pool workers forked by the fork server (which
lives on after the step) and the programs they run, as GNU Go is run. Before `gocore.cpu`, a step
counted only this process and its *reaped* children, and recorded ~0 for all of it."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
from prefect import flow, task

from flows.runtime import StoppingProcessPool
from gocore.cpu import tree_cpu_seconds
from tasks.app.steps import Steps, remote_cpu

BURN = 2.0  # CPU seconds each piece of work burns


def burn(seconds: float) -> int:
    """Spin on the CPU for `seconds` of this process's CPU time."""
    end, count = time.process_time() + seconds, 0
    while time.process_time() < end:
        count += 1
    return count


@task
def burn_here(seconds: float) -> int:
    return burn(seconds)


@task
def burn_in_a_child(seconds: float) -> int:
    code = f"import time\nend = time.process_time() + {seconds}\nwhile time.process_time() < end: pass\n"
    return subprocess.run([sys.executable, "-c", code], check=True, timeout=60).returncode


@flow
def burning(seconds: float, in_child: bool) -> list[int]:
    work = burn_in_a_child if in_child else burn_here
    return [future.result() for future in work.map([seconds])]


@pytest.mark.parametrize("in_child", [False, True], ids=["in-the-worker", "in-a-program-the-worker-runs"])
def test_a_step_records_the_cpu_its_forked_pool_workers_spend(prefect_harness, tmp_path: Path, in_child: bool):
    run = burning.with_options(task_runner=StoppingProcessPool(max_workers=1))
    record = Steps(tmp_path, "cpu").step("burn", lambda: {"calls": len(run(BURN, in_child))})
    assert record["cpu_seconds"] >= 0.9 * BURN, record  # was ~0.1: the workers' CPU reached no reaped child
    assert record["cpu_seconds"] < 10 * BURN + 30  # and not the whole session's


def test_the_tree_counts_a_live_child_and_keeps_counting_it_once_it_is_reaped():
    code = f"import time\nend = time.process_time() + {BURN}\nwhile time.process_time() < end: pass\ninput()\n"
    before = tree_cpu_seconds()
    child = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while tree_cpu_seconds() - before < BURN and time.monotonic() < deadline:
            time.sleep(0.1)
        alive = tree_cpu_seconds() - before
        assert alive >= BURN  # live, unreaped: only /proc shows it
    finally:
        child.communicate("\n", timeout=30)
    reaped = tree_cpu_seconds() - before
    assert reaped >= alive - 0.05  # moved into RUSAGE_CHILDREN, not lost (nor counted twice)
    assert reaped < alive + 1.0


def test_remote_workers_count_from_their_registration(tmp_path: Path):
    spent = [100.0]  # a cluster that had worked before the step
    steps = Steps(tmp_path, "remote")

    def work() -> dict[str, int]:
        remote_cpu(f"cluster-{tmp_path}", lambda: spent[0])
        spent[0] += 50.0
        return {}

    record = steps.step("remote", work)
    assert 50.0 <= record["cpu_seconds"] < 60.0  # its 50 s of the step, not the 100 before


def test_a_step_run_again_after_a_failure_counts_both_attempts(tmp_path: Path):
    steps = Steps(tmp_path, "again")

    def fails() -> dict:
        burn(1.0)
        raise KeyboardInterrupt  # Ctrl-C mid-step

    with pytest.raises(KeyboardInterrupt):
        steps.step("work", fails)
    record = steps.step("work", lambda: {"burnt": burn(1.0)})
    assert record["cpu_seconds"] >= 1.9 and record["attempts"] == 2, record
    assert not list((tmp_path / "loops" / "again" / "steps").glob("*.unfinished"))  # counted, then forgotten


def test_a_step_killed_mid_way_keeps_what_it_had_spent_until_its_last_note(tmp_path: Path):
    import os

    code = ("import os, signal, time\nfrom pathlib import Path\nfrom tasks.app import steps\n"
            "from tests.flows.test_step_cpu import burn\nsteps.HEARTBEAT = 0.2\n"
            f"def work():\n    burn({BURN})\n    time.sleep(0.5)\n    os.kill(os.getpid(), signal.SIGKILL)\n"
            f"steps.Steps(Path({str(tmp_path)!r}), 'killed').step('work', work)\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=Path(__file__).resolve().parents[2], timeout=120,
                          env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])})
    assert done.returncode == -9
    record = Steps(tmp_path, "killed").step("work", lambda: {})
    assert record["cpu_seconds"] >= 0.9 * BURN and record["attempts"] == 2, record


def test_a_dask_cluster_that_is_gone_is_not_asked_again_at_every_step():
    from flows import runtime

    address = "tcp://127.0.0.1:1"  # nothing listens: the client retries until its timeout
    started = time.monotonic()
    assert runtime.dask_cpu_seconds(address, timeout=1.0) == 0.0
    first = time.monotonic() - started
    started = time.monotonic()
    assert runtime.dask_cpu_seconds(address, timeout=1.0) == 0.0
    assert time.monotonic() - started < 0.05 < first  # every step read it twice, 10 s each, for good
