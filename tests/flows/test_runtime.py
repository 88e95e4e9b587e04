"""flows.runtime and failing flows: a failed run stops at once, never retried on permanent errors,
and never overlaps a run still working on the same dataset."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
from prefect import flow, task

from flows import runtime
from flows.ingest import run_ingest
from flows.runtime import StoppingProcessPool, artifact_key, results_as_completed
from storage import datasets, layout
from storage.download import DownloadError
from storage.locks import BusyError
from tests.http_server import Route, ScriptedServer


@task
def sleep_then_mark(seconds: float, marker: str) -> None:
    time.sleep(seconds)
    Path(marker).touch()


@task
def fail_now() -> None:
    raise ValueError("this task fails")


@task
def worker_view(name: str) -> tuple[int, str | None, str, bool]:
    import os
    import sys

    return os.getpid(), os.environ.get(name), os.getcwd(), "torch" in sys.modules


@flow
def views(name: str) -> list[tuple[int, str | None, str, bool]]:
    return [future.result() for future in worker_view.map([name] * 4)]


@flow(task_runner=StoppingProcessPool(max_workers=2))
def one_fails_one_sleeps(marker: str) -> None:
    futures = [sleep_then_mark.submit(20.0, marker), fail_now.submit()]
    list(results_as_completed(futures))


def test_a_failing_task_stops_the_flow_and_the_task_still_running(prefect_harness, tmp_path: Path):
    marker = tmp_path / "slept"
    start = time.monotonic()
    with pytest.raises(ValueError, match="this task fails"):
        one_fails_one_sleeps(str(marker))
    assert time.monotonic() - start < 18  # not the 20 s the other task would have taken
    time.sleep(3)
    assert not marker.exists()  # its worker was stopped, not left running


def test_an_unreachable_source_ends_the_ingest_before_the_next_source_is_fetched(prefect_harness, data_dir: Path):
    with ScriptedServer() as server:
        missing = server.add("/missing.zip", Route(b"", status=404))
        fine = server.add("/fine.zip", Route(b"PK\x05\x06" + bytes(18)))
        with pytest.raises(DownloadError, match="404"):
            run_ingest([missing, fine], "stops", str(data_dir), workers=1)
        assert [hit.path for hit in server.hits] == ["/missing.zip"]  # once: a 404 is not retried


def test_a_second_run_on_a_dataset_being_built_is_refused_naming_the_first(prefect_harness, data_dir: Path,
                                                                           tmp_path: Path):
    source = tmp_path / "sgf"
    source.mkdir()
    (source / "g.sgf").write_text("(;GM[1]SZ[9]KM[7.5]RE[B+R];B[ee];W[cc])")
    with datasets.build_lock(layout.dataset_dir(data_dir, "busy")):
        with pytest.raises(BusyError, match=r"dataset busy .* in use by another run \(pid \d+"):
            run_ingest([str(source)], "busy", str(data_dir), workers=1)
    assert run_ingest([str(source)], "busy", str(data_dir), workers=1).games == 1  # free again


@pytest.mark.parametrize("parts, key", [(("ingest", "KGS_2019.v2"), "ingest-kgs-2019-v2"),
                                        (("selfplay-gen", 3), "selfplay-gen-3"),
                                        (("match", "x" * 200), "match-" + "x" * 94)])
def test_artifact_keys_are_lowercase_letters_digits_and_single_dashes(parts, key):
    assert artifact_key(*parts) == key


def test_a_pool_given_no_task_leaves_no_worker_behind():
    import multiprocessing

    before = set(multiprocessing.active_children())
    with StoppingProcessPool(max_workers=2):  # workers start up front; a rerun's step may submit nothing
        assert len(set(multiprocessing.active_children()) - before) >= 2
    assert set(multiprocessing.active_children()) - before == set()  # they waited forever: exit hung


def test_workers_fork_from_a_preloaded_server_yet_see_the_environment_and_directory_of_their_pool(
        prefect_harness, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """The fork server starts with the session's first pool and keeps the environment and directory
    of then (conftest set DO_NOT_TRACK before any); a later pool's workers must still see what a
    spawned worker would: a variable set or removed since, the directory changed since."""
    monkeypatch.setenv("GOZERO_TEST_VIEW", "first")
    first = views.with_options(task_runner=StoppingProcessPool(max_workers=2))("GOZERO_TEST_VIEW")
    assert {view[1] for view in first} == {"first"}
    assert all(view[3] for view in first)  # torch came with the fork (FORK_SERVER_PRELOAD), not imported by the task
    monkeypatch.delenv("DO_NOT_TRACK")
    monkeypatch.chdir(tmp_path)
    second = views.with_options(task_runner=StoppingProcessPool(max_workers=2))("DO_NOT_TRACK")
    assert {view[1:3] for view in second} == {(None, str(tmp_path))}
    assert not {view[0] for view in first} & {view[0] for view in second}  # new workers for a new pool


def test_spawned_workers_are_still_there_when_asked_for(prefect_harness, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv(runtime.POOL_START_ENV, "spawn")
    monkeypatch.setenv("GOZERO_TEST_VIEW", "spawned")
    seen = views.with_options(task_runner=StoppingProcessPool(max_workers=2))("GOZERO_TEST_VIEW")
    assert {view[1] for view in seen} == {"spawned"}


def test_pool_workers_come_preloaded_even_when_the_data_loader_started_its_pool_first(tmp_path: Path):
    """The fork server is one per process and its first starter fixes what it preloads: the
    training data loader's pool must not be that starter (a fresh process, as in `gozero train`
    followed by a pool, or an xdist worker that ran a loader test first; issue #39)."""
    code = ("from storage.stream_workers import open_pool\n"
            "loader = open_pool(2)\n"
            "assert loader.submit(abs, -1).result() == 1\n"
            "loader.shutdown()\n"
            "from flows.runtime import StoppingProcessPool\n"
            "from tests.helpers import preloaded_modules\n"
            "with StoppingProcessPool(max_workers=1) as pool:\n"
            "    print(pool._executor.submit(preloaded_modules, ('torch', 'prefect', 'numba')).result())\n")
    done = fresh_python(code, timeout=300)
    assert done.stdout.strip().splitlines()[-1] == "[True, True, True]"  # came with the fork, not imported by a task


def test_a_ctrl_c_while_the_workers_start_is_raised_once_they_are_up_and_they_ignore_it():
    """The pool starts its workers with Ctrl-C held back (a worker importing must not print a
    traceback): one arriving then was lost while this process ignored it, and the command ran on
    (tests/system/test_interrupts.py caught it under load). It must reach the flow's process once
    the workers are up, and the workers must not be the ones to stop. (Python keeps SIGINT ignored
    when it starts ignored, as under pytest-xdist's workers: the script sets Python's own handler.)"""
    code = ("import os, signal, concurrent.futures.process as cf\n"
            "signal.signal(signal.SIGINT, signal.default_int_handler)  # as a terminal's command has it\n"
            "launch = cf.ProcessPoolExecutor._launch_processes\n"
            "def interrupted(self):\n"
            "    os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C now, while the workers start\n"
            "    launch(self)\n"
            "cf.ProcessPoolExecutor._launch_processes = interrupted\n"
            "from flows.runtime import StoppingProcessPool\n"
            "pool = StoppingProcessPool(max_workers=1)\n"
            "try:\n"
            "    with pool:\n"
            "        print('ran on')\n"
            "except KeyboardInterrupt:\n"
            "    print('interrupted')\n"
            "cf.ProcessPoolExecutor._launch_processes = launch\n"
            "with StoppingProcessPool(max_workers=1) as again:\n"
            "    print(again._executor.submit(signal.getsignal, signal.SIGINT).result() == signal.SIG_IGN)\n"
            "    print(again._executor.submit(signal.pthread_sigmask, signal.SIG_BLOCK, []).result())\n")
    done = fresh_python(code, timeout=120)
    assert done.stdout.splitlines() == ["interrupted", "True", "set()"], done.stdout + done.stderr[-3000:]


def fresh_python(code: str, timeout: float) -> subprocess.CompletedProcess:
    """`code` run by a new Python in the repository (its own signal handlers and fork server); it must
    exit 0."""
    done = subprocess.run([sys.executable, "-c", code], cwd=Path(__file__).resolve().parents[2], capture_output=True,
                          text=True, timeout=timeout)
    assert done.returncode == 0, done.stderr[-3000:]
    return done
