"""The net that ships with gozero (storage/shipped/): a fresh data dir registers it on first use,
once, and it plays legal moves to the end against GNU Go through the CLI as a user types it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from storage import shipped

REPO = Path(__file__).resolve().parents[2]


def gozero(*args: str, data: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("MLFLOW_TRACKING_URI", "PREFECT_API_URL")}
    return subprocess.run([sys.executable, "-m", "flows.cli", *args, "--data-dir", str(data)], cwd=REPO,
                          env={**env, "PYTHONPATH": str(REPO)}, capture_output=True, text=True, timeout=600)


def test_a_9x9_net_ships_with_its_provenance():
    assert 9 in shipped.shipped_sizes()
    facts = shipped.provenance(9)
    assert facts["command"].startswith("gozero ") and facts["matches"], facts
    assert max(match["games"] for match in facts["matches"]) >= 100  # measured, not claimed
    size = sum(path.stat().st_size for path in shipped.shipped_dir(9).iterdir())
    assert size < 8_000_000  # a few MB at most: it is in the repository


def test_the_shipped_net_plays_gnu_go_legally_and_is_registered_once(gnugo_path: str, tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch):
    data = tmp_path / "data"
    played = gozero("play", "--black", "shipped", "--white", "gnugo-1", "--sims", "16", "--sgf", str(tmp_path / "g.sgf"),
                    data=data)
    assert played.returncode == 0, played.stderr[-3000:]
    result = [line for line in played.stdout.splitlines() if line.startswith("result ")]
    assert len(result) == 1 and ("(two-passes)" in result[0] or "(resign)" in result[0]), played.stdout[-2000:]
    assert (tmp_path / "g.sgf").read_text().startswith("(;")
    again = gozero("play", "--black", "gnugo-1", "--white", "shipped", "--sims", "16", data=data)
    assert again.returncode == 0, again.stderr[-3000:]
    listed = gozero("models", "list", "--size", "9", data=data)
    assert listed.returncode == 0, listed.stderr
    from storage import registry

    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)  # the data dir's own registry, as the CLI used
    versions = registry.list_versions(shipped.shipped_name(9), data)
    assert len(versions) == 1 and "champion" in versions[0].aliases  # a second first use registered nothing
    assert json.loads(json.dumps(versions[0].tags))["shipped"] == "true"


@pytest.mark.parametrize("command", [["gtp", "--model", "shipped"], ["analysis", "--model", "shipped"]])
def test_engines_for_guis_start_with_the_shipped_net(command: list[str], tmp_path: Path):
    data = tmp_path / "data"
    env = {k: v for k, v in os.environ.items() if k not in ("MLFLOW_TRACKING_URI", "PREFECT_API_URL")}
    query = ("name\nboardsize 9\nclear_board\ngenmove b\nquit\n" if command[0] == "gtp" else
             json.dumps({"id": "q", "moves": [], "rules": "chinese", "komi": 7.5, "boardXSize": 9, "boardYSize": 9,
                         "maxVisits": 16}) + "\n")
    done = subprocess.run([sys.executable, "-m", "flows.cli", *command, "--data-dir", str(data)], cwd=REPO,
                          env={**env, "PYTHONPATH": str(REPO)}, input=query, capture_output=True, text=True, timeout=300)
    if command[0] == "gtp":
        assert done.returncode == 0, done.stderr[-2000:]
        replies = [line for line in done.stdout.splitlines() if line.startswith("=")]
        assert len(replies) == 5 and replies[3] != "= resign", done.stdout  # a move on the empty board
    else:
        answer = json.loads(done.stdout.splitlines()[0])
        assert answer["id"] == "q" and answer["moveInfos"], done.stdout[-2000:]
