"""Every benchmark runs both ways, ``python benchmarks/NAME.py`` and ``python -m benchmarks.NAME``.

Run as a script, a benchmark puts ``benchmarks/`` first on ``sys.path``, so a module there named
like a package (``benchmarks/gocore.py`` once did this) is imported in that package's place: by
the benchmark itself or by any library under it. Each benchmark parses its arguments before its
heavy imports, so ``--help`` answers at once.
"""

from __future__ import annotations

import ast
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BENCHMARKS = sorted(path.stem for path in (REPO / "benchmarks").glob("*.py") if path.stem != "__init__")


def test_the_benchmarks_are_found():
    assert {"rules", "features_micro", "ingest", "train", "selfplay"} <= set(BENCHMARKS)


@pytest.mark.parametrize("name", BENCHMARKS)
def test_no_benchmark_is_named_like_an_importable_module(name):
    # gocore, storage, tasks, flows, tests, numba, torch, prefect, polars, the standard library...
    assert importlib.util.find_spec(name) is None, f"benchmarks/{name}.py shadows the module {name!r}"


@pytest.mark.parametrize("how", ["script", "module"])
@pytest.mark.parametrize("name", BENCHMARKS)
def test_every_benchmark_answers_help_both_ways(name, how):
    target = [f"benchmarks/{name}.py"] if how == "script" else ["-m", f"benchmarks.{name}"]
    done = subprocess.run([sys.executable, *target, "--help"], cwd=REPO, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: ") and "--help" in done.stdout, done.stdout
    summary = ast.get_docstring(ast.parse((REPO / "benchmarks" / f"{name}.py").read_text())).splitlines()[0]
    assert " ".join(summary.split()) in " ".join(done.stdout.split())  # argparse rewraps it
