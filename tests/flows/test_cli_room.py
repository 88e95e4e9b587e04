"""The CLI is the top room: the import contract that keeps it there names every other flows module."""

from __future__ import annotations

import pkgutil
import tomllib
from pathlib import Path

import flows

ROOT = Path(__file__).resolve().parents[2]


def test_every_flows_module_but_the_cli_is_forbidden_to_import_it():
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    (contract,) = [c for c in contracts if c.get("forbidden_modules") == ["flows.cli"]]
    modules = {f"flows.{info.name}" for info in pkgutil.iter_modules(flows.__path__) if info.name != "cli"}
    assert modules <= set(contract["source_modules"]), "add the new flows module to the CLI contract"
    assert {"tasks", "storage", "gocore"} <= set(contract["source_modules"])


def test_the_cli_is_a_package_that_runs_as_a_module():
    import flows.cli

    assert Path(flows.cli.__file__).parent == ROOT / "flows" / "cli"
    assert (ROOT / "flows" / "cli" / "__main__.py").is_file()  # python -m flows.cli
    assert callable(flows.cli.main) and flows.cli.app.registered_commands


def test_no_module_is_over_400_lines():
    """Issue #25's size limit for every module of the house (tests excluded): split by concern instead."""
    long = {str(path.relative_to(ROOT)): lines for top in ("flows", "tasks", "gocore", "storage", "benchmarks")
            for path in (ROOT / top).rglob("*.py")
            if (lines := len(path.read_text(encoding="utf-8").splitlines())) > 400}
    assert long == {}
