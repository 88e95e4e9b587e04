"""Data is never replaced silently: `gozero ingest` into a dataset built from other sources or options
is refused naming what differs (unless `--replace`), an ingest that accepts no game fails naming the
refusals and leaves no dataset folder, and `gozero play --sgf` never overwrites a file. Real CLI
processes; those that reach a flow use the session's Prefect server."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from storage import datasets, layout
from tests.helpers import build_uct_dataset

REPO = Path(__file__).resolve().parents[2]


def gozero(*args: str, api_url: str | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    """`python -m flows.cli ARGS` as a user runs it; its output (stdout and stderr) in `.stdout`."""
    env = {k: v for k, v in os.environ.items() if k not in ("PREFECT_API_URL", "PREFECT_LOGGING_LEVEL")}
    env.update(PYTHONPATH=str(REPO), COLUMNS="200")
    if api_url:
        env["PREFECT_API_URL"] = api_url
    return subprocess.run([sys.executable, "-m", "flows.cli", *args], cwd=REPO, env=env, timeout=timeout,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(data dir, its SGF folder): dataset `first` built from 6 UCT games at 5x5."""
    base = tmp_path_factory.mktemp("refusals")
    data = base / "data"
    build_uct_dataset(base / "sgf", layout.dataset_dir(data, "first"), 6, size=5)
    return data, base / "sgf"


def shard_bytes(dataset: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(dataset.glob("shard-*.parquet"))}


def test_ingest_into_a_dataset_built_from_other_sources_is_refused_naming_them(built):
    data, sgf = built
    dataset = layout.dataset_dir(data, "first")
    before = shard_bytes(dataset), datasets.read_manifest(dataset)
    result = gozero("ingest", str(sgf), "--dataset", "first", "--size", "5", "--augment", "all8",
                    "--data-dir", str(data), timeout=120)
    assert result.returncode == 1, result.stdout
    assert "dataset first exists" in result.stdout and "uct-vs-random" in result.stdout, result.stdout
    assert "augment 'none' (asked 'all8')" in result.stdout and "--replace" in result.stdout, result.stdout
    assert "Traceback" not in result.stdout and len(result.stdout.strip().splitlines()) == 1, result.stdout
    assert (shard_bytes(dataset), datasets.read_manifest(dataset)) == before  # untouched


def test_replace_rebuilds_it_on_purpose(built, prefect_harness, tmp_path: Path):
    from prefect.settings import PREFECT_API_URL

    data, sgf = built
    copy = tmp_path / "data"
    build_uct_dataset(tmp_path / "sgf", layout.dataset_dir(copy, "first"), 4, size=5)
    result = gozero("ingest", str(sgf), "--dataset", "first", "--size", "5", "--augment", "none", "--replace",
                    "--workers", "1", "--data-dir", str(copy), api_url=PREFECT_API_URL.value())
    assert result.returncode == 0, result.stdout
    manifest = datasets.read_manifest(layout.dataset_dir(copy, "first"))
    assert manifest["sources"] == [str(sgf)] and manifest["games_accepted"] == 6


def test_an_ingest_that_accepts_no_game_fails_naming_why_and_leaves_no_dataset(built, prefect_harness):
    from prefect.settings import PREFECT_API_URL

    data, sgf = built
    result = gozero("ingest", str(sgf), "--dataset", "nine", "--size", "9", "--workers", "1", "--data-dir", str(data),
                    api_url=PREFECT_API_URL.value())  # 5x5 games, --size 9 given (without it 5 is inferred)
    assert result.returncode == 1, result.stdout
    assert "no game accepted into dataset nine: 6 refused (filter:size: 6)" in result.stdout, result.stdout
    assert "--size 9" in result.stdout and "Traceback" not in result.stdout, result.stdout
    assert not layout.dataset_dir(data, "nine").exists()


def test_an_ingest_of_a_missing_folder_leaves_no_dataset(built, prefect_harness, tmp_path: Path):
    from prefect.settings import PREFECT_API_URL

    data, _ = built
    result = gozero("ingest", str(tmp_path / "no-such-folder"), "--dataset", "mine", "--data-dir", str(data),
                    api_url=PREFECT_API_URL.value())
    assert result.returncode == 1 and "error:" in result.stdout, result.stdout
    assert not layout.dataset_dir(data, "mine").exists()


def test_play_refuses_to_overwrite_an_sgf_file(tmp_path: Path):
    existing = tmp_path / "game.sgf"
    existing.write_text("(;GM[1]SZ[9]C[mine])")
    result = gozero("play", "--black", "random", "--white", "random", "--size", "5", "--sgf", str(existing),
                    timeout=120)
    assert result.returncode == 1 and "already exists" in result.stdout, result.stdout
    assert existing.read_text() == "(;GM[1]SZ[9]C[mine])"
    fresh = gozero("play", "--black", "random", "--white", "random", "--size", "5",
                   "--sgf", str(tmp_path / "new.sgf"), timeout=120)
    assert fresh.returncode == 0 and (tmp_path / "new.sgf").read_text().startswith("(;"), fresh.stdout
