"""`gozero datasets list|show` and `gozero --version`: read from the manifests, no Prefect."""

from __future__ import annotations

from importlib.metadata import version

from typer.testing import CliRunner

from flows.cli import app
from storage import layout
from tests.helpers import build_uct_dataset

runner = CliRunner()


def test_version_prints_the_installed_version():
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0 and result.output.strip() == f"gozero {version('gozero')}"


def test_datasets_list_and_show_read_the_manifest_and_the_refusals(tmp_path):
    data = tmp_path / "data"
    dataset = layout.dataset_dir(data, "first")
    sgfs = tmp_path / "sgf"
    build_uct_dataset(sgfs, dataset, games=3, extra_sgfs={"broken.sgf": "(;GM[1]SZ[5];B[aa", "big.sgf": "(;GM[1]SZ[9]RE[B+1];B[aa])"})
    (data / "datasets" / "half").mkdir()  # an unfinished ingest: no manifest

    listed = runner.invoke(app, ["datasets", "list", "--data-dir", str(data)], terminal_width=200)
    assert listed.exit_code == 0, listed.output
    lines = listed.output.strip().splitlines()
    assert lines[0].startswith("first: 5x5, agz17, none, 3 games (2 refused), ") and "uct-vs-random" in lines[0]
    assert lines[1] == "half: not finished (rerun its ingest to complete it)"

    shown = runner.invoke(app, ["datasets", "show", "first", "--data-dir", str(data)], terminal_width=200)
    assert shown.exit_code == 0, shown.output
    assert "options: " in shown.output and "encoder=agz17" in shown.output and "size=5" in shown.output
    refused = next(line for line in shown.output.splitlines() if line.startswith("refused games: "))
    assert refused != "refused games: none" and "size" in refused, refused


def test_show_of_a_missing_dataset_names_the_ones_there(tmp_path):
    data = tmp_path / "data"
    build_uct_dataset(tmp_path / "sgf", layout.dataset_dir(data, "first"), games=2)
    missing = runner.invoke(app, ["datasets", "show", "secnd", "--data-dir", str(data)])
    assert missing.exit_code == 1 and "no dataset 'secnd'" in missing.output and "datasets: first" in missing.output
    empty = runner.invoke(app, ["datasets", "list", "--data-dir", str(tmp_path / "none")])
    assert empty.exit_code == 0 and "no datasets yet" in empty.output
