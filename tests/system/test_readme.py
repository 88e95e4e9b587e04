"""The docs' shell blocks run as written: every ```sh block of README.md, then of each docs/ page in
mkdocs.yml's nav order (the walkthrough first), in order, in one empty directory.

A block whose first line is ``# needs: internet ...`` or ``# needs: server ...`` is skipped with that
reason (tests/system/test_deployments.py runs docs/deployments.md's server block). Set-up lines are
skipped because this test stands in for them: ``make ...`` (the venv exists: this is its python) and
``. .venv/bin/activate`` (the venv's bin comes first on PATH). Everything else runs with bash
(``set -eo pipefail``) in a fresh temporary directory, with GOZERO_DATA a fresh data dir,
MLFLOW_TRACKING_URI unset (the per-data-dir store), PREFECT_HOME in a temp dir and no
PREFECT_API_URL, and GNU Go on PATH. PYTHONPATH is this checkout, so ``gozero`` runs this checkout's
code even if the venv's editable install points at another one.

The walkthrough is sized so that all the blocks run in about 2-3 minutes on 2 cores. README.md's
relative links are checked here too (`mkdocs build --strict` in `make lint` checks the pages').
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
import yaml
from markdown.extensions.toc import slugify

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
DOCS = REPO / "docs"
WALKTHROUGH = DOCS / "walkthrough.md"
VENV_BIN = Path(sys.executable).parent
ALLOWED_NEEDS = ("internet", "server")
BLOCK_TIMEOUT = 600

_FENCE = re.compile(r"^```sh[ \t]*\n(.*?)^```[ \t]*$", re.M | re.S)
_ANY_FENCE = re.compile(r"^```.*?^```[ \t]*$", re.M | re.S)
_NEEDS = re.compile(r"^#\s*needs:\s*(\S.*)$")
_SETUP_LINE = re.compile(r"^\s*(make(\s|$)|(\.|source)\s+\.venv/bin/activate\s*(#.*)?$)")
_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


@dataclass(frozen=True)
class ShBlock:
    """One ```sh block of a Markdown file."""

    path: str
    """The file, relative to the checkout (``README.md``, ``docs/walkthrough.md``)."""
    line: int
    """1-based line of the block's first content line."""
    text: str
    heading: str
    """The last ``## `` heading above the block, else the page's ``# `` title."""

    @property
    def where(self) -> str:
        """``path:line``, as test ids and messages name the block."""
        return f"{self.path}:{self.line}"

    @property
    def needs(self) -> str | None:
        """The reason after ``# needs:`` on the first line, else None (the block runs offline)."""
        first = self.text.lstrip("\n").partition("\n")[0].strip()
        match = _NEEDS.match(first)
        return match.group(1).strip() if match else None

    def script(self) -> str:
        """The block without the set-up lines this test stands in for."""
        return "".join(line for line in self.text.splitlines(keepends=True) if not _SETUP_LINE.match(line))


def sh_blocks(path: Path = README) -> list[ShBlock]:
    """Every ```sh block of the Markdown file `path`, in order."""
    text = path.read_text(encoding="utf-8")
    title = re.match(r"# (.+)", text)
    name = path.relative_to(REPO).as_posix() if path.is_relative_to(REPO) else path.name
    blocks = []
    for match in _FENCE.finditer(text):
        before = text[: match.start(1)]
        headings = re.findall(r"^## (.+)$", before, re.M)
        heading = headings[-1] if headings else (title.group(1) if title else "")
        blocks.append(ShBlock(name, before.count("\n") + 1, match.group(1), heading))
    return blocks


def nav_pages() -> list[Path]:
    """The docs pages in mkdocs.yml's nav order."""
    def walk(items: list) -> list[str]:
        pages = []
        for item in items:
            value = next(iter(item.values())) if isinstance(item, dict) else item
            pages += walk(value) if isinstance(value, list) else [value]
        return pages

    nav = yaml.safe_load((REPO / "mkdocs.yml").read_text(encoding="utf-8"))["nav"]
    return [DOCS / page for page in walk(nav)]


def all_blocks() -> list[ShBlock]:
    """README.md's blocks, then every docs page's, in the order the pages build on each other."""
    return [block for path in [README, *nav_pages()] for block in sh_blocks(path)]


def anchors(path: Path) -> set[str]:
    """The ids MkDocs gives the headings of `path` (code spans and link targets dropped)."""
    text = _ANY_FENCE.sub("", path.read_text(encoding="utf-8"))
    titles = [re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", title).replace("`", "")
              for title in re.findall(r"^#{1,6} (.+?)\s*$", text, re.M)]
    return {slugify(title, "-") for title in titles}


BLOCKS = all_blocks()


def test_the_docs_have_a_walkthrough_and_mark_only_internet_and_server_blocks() -> None:
    for block in BLOCKS:
        if block.needs is not None:
            assert block.needs.startswith(ALLOWED_NEEDS), f"{block.where}: # needs: {block.needs}"
    walkthrough = sh_blocks(WALKTHROUGH)
    assert walkthrough and all(block.needs is None for block in walkthrough)
    assert nav_pages()[:2] == [DOCS / "index.md", WALKTHROUGH], "the walkthrough's blocks must run first"
    deployments = [block for block in sh_blocks(DOCS / "deployments.md") if block.needs]
    assert deployments and deployments[0].needs.startswith("server")


def test_every_docs_page_is_in_the_nav_so_its_blocks_run() -> None:
    pages = sorted(DOCS.rglob("*.md"))
    assert pages == sorted(nav_pages())


def test_the_readmes_relative_links_exist() -> None:
    text = _ANY_FENCE.sub("", README.read_text(encoding="utf-8"))
    targets = [t for t in _LINK.findall(text) if not re.match(r"[a-z]+:", t)]
    assert targets, "README.md links to its docs pages"
    for target in targets:
        file, _, anchor = target.partition("#")
        path = (REPO / file) if file else README
        assert path.exists(), f"README.md links to {target}: no {file}"
        if anchor and path.suffix == ".md":
            assert anchor in anchors(path), f"README.md links to {target}: {file} has no heading #{anchor}"


def test_the_block_parser_skips_set_up_lines_and_reads_markers(tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    readme.write_text("# x\n\n```sh\nmake install   # once\n. .venv/bin/activate\necho hi\n```\n\n"
                      "```python\nprint(1)\n```\n\n## B\n\n```sh\n# needs: internet (a catalog)\nget\n```\n")
    first, second = sh_blocks(readme)
    assert (first.line, first.heading, first.needs, first.script()) == (4, "x", None, "echo hi\n")
    assert (second.heading, second.needs) == ("B", "internet (a catalog)")


@pytest.fixture(scope="module")
def readme_shell(tmp_path_factory: pytest.TempPathFactory, gnugo_path: str) -> dict:
    """The one directory and environment every docs block runs in, and the first that failed."""
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
@pytest.mark.parametrize("block", BLOCKS, ids=[block.where for block in BLOCKS])
def test_docs_block_runs_as_written(block: ShBlock, readme_shell: dict) -> None:
    if block.needs is not None:
        pytest.skip(f"{block.where} needs {block.needs}")
    if readme_shell["failed"] is not None:
        pytest.skip(f"an earlier block failed ({readme_shell['failed']}); later ones build on it")
    script = block.script()
    if not script.strip():
        pytest.skip(f"{block.where} is set-up only (make, activate): this test stands in for it")
    started = time.monotonic()
    try:
        done = subprocess.run(["bash", "-c", "set -eo pipefail\n" + script], cwd=readme_shell["cwd"],
                              env=readme_shell["env"], stdin=subprocess.DEVNULL, capture_output=True,
                              text=True, timeout=BLOCK_TIMEOUT)
    except subprocess.TimeoutExpired as timeout:
        readme_shell["failed"] = block.where
        pytest.fail(f"{block.where} did not finish in {BLOCK_TIMEOUT} s:\n{script}\n{timeout.stdout}")
    if done.returncode != 0:
        readme_shell["failed"] = block.where
        pytest.fail(f"{block.where} ({block.heading}) exited {done.returncode} after "
                    f"{time.monotonic() - started:.0f} s:\n--- block\n{script}--- stdout\n{done.stdout}\n"
                    f"--- stderr\n{done.stderr}")
