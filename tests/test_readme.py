"""README.md's shell blocks run as written: every ```sh block, in order, in one empty directory.

A block whose first line is ``# needs: internet ...`` or ``# needs: server ...`` is skipped with that
reason (tests/flows/test_deployments.py runs the server block). Set-up lines are skipped because this
test stands in for them: ``make ...`` (the venv exists: this is its python) and
``. .venv/bin/activate`` (the venv's bin comes first on PATH). Everything else runs with bash
(``set -eo pipefail``) in a fresh temporary directory, with GOZERO_DATA a fresh data dir,
MLFLOW_TRACKING_URI unset (the per-data-dir store), PREFECT_HOME in a temp dir and no
PREFECT_API_URL, and GNU Go on PATH. PYTHONPATH is this checkout, so ``gozero`` runs this checkout's
code even if the venv's editable install points at another one.

The walkthrough is sized so that the whole file runs in about 2-3 minutes on 2 cores.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
VENV_BIN = Path(sys.executable).parent
ALLOWED_NEEDS = ("internet", "server")
BLOCK_TIMEOUT = 600

_FENCE = re.compile(r"^```sh[ \t]*\n(.*?)^```[ \t]*$", re.M | re.S)
_NEEDS = re.compile(r"^#\s*needs:\s*(\S.*)$")
_SETUP_LINE = re.compile(r"^\s*(make(\s|$)|(\.|source)\s+\.venv/bin/activate\s*(#.*)?$)")


@dataclass(frozen=True)
class ShBlock:
    """One ```sh block of a Markdown file."""

    line: int
    """1-based line of the block's first content line."""
    text: str
    heading: str
    """The last ``## `` heading above the block."""

    @property
    def needs(self) -> str | None:
        """The reason after ``# needs:`` on the first line, else None (the block runs offline)."""
        first = self.text.lstrip("\n").partition("\n")[0].strip()
        match = _NEEDS.match(first)
        return match.group(1).strip() if match else None

    def script(self) -> str:
        """The block without the set-up lines this test stands in for."""
        return "".join(line for line in self.text.splitlines(keepends=True) if not _SETUP_LINE.match(line))


def readme_blocks(path: Path = README) -> list[ShBlock]:
    """Every ```sh block of `path`, in order."""
    text = path.read_text(encoding="utf-8")
    blocks = []
    for match in _FENCE.finditer(text):
        before = text[: match.start(1)]
        headings = re.findall(r"^## (.+)$", before, re.M)
        blocks.append(ShBlock(before.count("\n") + 1, match.group(1), headings[-1] if headings else ""))
    return blocks


BLOCKS = readme_blocks()


def test_the_readme_has_a_walkthrough_and_marks_only_internet_and_server_blocks() -> None:
    assert any(block.heading.startswith("Walkthrough") for block in BLOCKS)
    for block in BLOCKS:
        if block.needs is not None:
            assert block.needs.startswith(ALLOWED_NEEDS), f"README.md:{block.line}: # needs: {block.needs}"
    assert [block.needs for block in BLOCKS if block.heading.startswith("Deployments")][0].startswith("server")
    walkthrough = [block for block in BLOCKS if block.heading.startswith("Walkthrough")]
    assert walkthrough and all(block.needs is None for block in walkthrough)


def test_the_block_parser_skips_set_up_lines_and_reads_markers(tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    readme.write_text("# x\n\n## A\n\n```sh\nmake install   # once\n. .venv/bin/activate\necho hi\n```\n\n"
                      "```python\nprint(1)\n```\n\n## B\n\n```sh\n# needs: internet (a catalog)\nget\n```\n")
    first, second = readme_blocks(readme)
    assert (first.line, first.heading, first.needs, first.script()) == (6, "A", None, "echo hi\n")
    assert (second.heading, second.needs) == ("B", "internet (a catalog)")


@pytest.fixture(scope="module")
def readme_shell(tmp_path_factory: pytest.TempPathFactory, gnugo_path: str) -> dict:
    """The one directory and environment every README block runs in, and whether one failed."""
    root = tmp_path_factory.mktemp("readme")
    cwd = root / "work"
    cwd.mkdir()
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PREFECT_", "MLFLOW_", "GOZERO_", "VIRTUAL_ENV"))}
    env.update(
        GOZERO_DATA=str(root / "data"), PREFECT_HOME=str(root / "prefect"), DO_NOT_TRACK="true",
        PREFECT_SERVER_ANALYTICS_ENABLED="false", PYTHONPATH=str(REPO),
        PATH=os.pathsep.join([str(VENV_BIN), env.get("PATH", ""), str(Path(gnugo_path).parent)]),
    )
    found = shutil.which("gozero", path=env["PATH"])
    assert found is not None and Path(found) == VENV_BIN / "gozero", f"gozero resolves to {found}"
    return {"cwd": cwd, "env": env, "failed": None}


@pytest.mark.slow
@pytest.mark.gnugo
@pytest.mark.parametrize("block", BLOCKS, ids=[f"README.md:{block.line}" for block in BLOCKS])
def test_readme_block_runs_as_written(block: ShBlock, readme_shell: dict) -> None:
    if block.needs is not None:
        pytest.skip(f"README.md:{block.line} needs {block.needs}")
    if readme_shell["failed"] is not None:
        pytest.skip(f"an earlier block failed (README.md:{readme_shell['failed']}); later ones build on it")
    script = block.script()
    if not script.strip():
        pytest.skip(f"README.md:{block.line} is set-up only (make, activate): this test stands in for it")
    started = time.monotonic()
    try:
        done = subprocess.run(["bash", "-c", "set -eo pipefail\n" + script], cwd=readme_shell["cwd"],
                              env=readme_shell["env"], stdin=subprocess.DEVNULL, capture_output=True,
                              text=True, timeout=BLOCK_TIMEOUT)
    except subprocess.TimeoutExpired as timeout:
        readme_shell["failed"] = block.line
        pytest.fail(f"README.md:{block.line} did not finish in {BLOCK_TIMEOUT} s:\n{script}\n{timeout.stdout}")
    if done.returncode != 0:
        readme_shell["failed"] = block.line
        pytest.fail(f"README.md:{block.line} ({block.heading}) exited {done.returncode} after "
                    f"{time.monotonic() - started:.0f} s:\n--- block\n{script}--- stdout\n{done.stdout}\n"
                    f"--- stderr\n{done.stderr}")
