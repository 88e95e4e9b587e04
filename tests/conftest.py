"""Test session set-up: Prefect and MLflow state live in a temp dir, never in the user's home.

Tiers (Makefile):
    make test-fast     unit and flow tests: not marked system, slow or gnugo
    make test-system   tests/system/ (real servers and processes, the CLI as a subprocess (GTP,
                       KataGo analysis), SIGKILL reruns, Dask, Sabaki, the docs' sh blocks, the main
                       job, the strength recipe and benchmarks), slow tests and tests that play GNU Go
    make test          lint, then every tier (what .ci/run calls)
Each runs on TEST_WORKERS=2 processes (pytest-xdist, --dist loadfile); every process runs this file
itself, so each has its own temp dir, Prefect server and MLflow store.
Every test under tests/system/ is marked ``system`` here, so ``-m "not system"`` leaves them out.

This runs before any test module imports Prefect (STACK-NOTES: the harness does not isolate
PREFECT_HOME itself), so it must stay free of Prefect and MLflow imports at module level.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

_SESSION_DIR = Path(tempfile.mkdtemp(prefix="gozero-tests-"))
os.environ["PREFECT_HOME"] = str(_SESSION_DIR / "prefect")
os.environ.pop("PREFECT_API_URL", None)
os.environ["DO_NOT_TRACK"] = "true"
os.environ["PREFECT_SERVER_ANALYTICS_ENABLED"] = "false"
os.environ["PREFECT_LOGGING_LEVEL"] = os.environ.get("PREFECT_LOGGING_LEVEL", "WARNING")
os.environ["MLFLOW_TRACKING_URI"] = f"sqlite:///{_SESSION_DIR / 'mlflow.db'}"
os.environ["GOZERO_DATA"] = str(_SESSION_DIR / "data")

GNUGO = shutil.which("gnugo") or ("/usr/games/gnugo" if Path("/usr/games/gnugo").exists() else None)


@pytest.fixture(autouse=True, scope="session")
def _one_torch_thread():
    """Tiny nets run faster on one thread, and far faster when other processes share the 2 cores.
    Set only if a collected test module imported torch (conftest itself must not import it)."""
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(1)
    yield


@pytest.fixture(scope="session")
def gnugo_path() -> str:
    """Path of the GNU Go binary; CI installs it, so a missing binary fails rather than skips."""
    if GNUGO is None:
        if os.environ.get("CI"):
            pytest.fail("GNU Go is not installed (.ci/run installs the Debian package gnugo)")
        pytest.skip("GNU Go is not installed (apt-get install -y gnugo)")
    return GNUGO


@pytest.fixture(scope="session")
def prefect_harness():
    """One temporary Prefect server for the whole session (costs 7-12 s once)."""
    from prefect.testing.utilities import prefect_test_harness

    with prefect_test_harness(server_startup_timeout=120):
        yield


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh gozero data dir, also set as GOZERO_DATA."""
    path = tmp_path / "gozero-data"
    path.mkdir()
    monkeypatch.setenv("GOZERO_DATA", str(path))
    return path


LONGEST_FIRST = ("system/test_deployments.py", "system/test_readme.py", "system/test_interrupts.py",
                 "system/test_zero_loop_kill.py", "system/test_strong.py", "system/test_strength.py",
                 "system/test_alphago_kill.py", "system/test_main_job.py", "flows/test_zero_loop.py",
                 "flows/test_alphago.py", "gocore/search/test_agents.py")
"""The files that take longest (CI's --durations), started first: on 2 processes, a file per process at a
time, one of them left for the end would keep a process busy minutes after the other one is done."""


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark every test under tests/system/ as a system test (the folder is the tier); the longest
    files first (`LONGEST_FIRST`), every file's tests in their own order."""
    root = Path(__file__).parent
    system = root / "system"
    for item in items:
        if system in Path(item.fspath).parents:
            item.add_marker(pytest.mark.system)
    rank = {name: index for index, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(Path(item.fspath).relative_to(root).as_posix(), len(rank)))
