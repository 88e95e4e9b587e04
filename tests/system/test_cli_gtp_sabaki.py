"""`gozero gtp` driven by a GTP client nobody here wrote: Sabaki's @sabaki/gtp from npm, in Node.

tests/node/sabaki_session.js runs the session and reads the analysis lines as Sabaki does; the
package is installed from tests/node/package-lock.json into the test's temporary directory. CI
installs node and npm (.ci/run); without them this test is skipped.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

NODE_DIR = Path(__file__).parent.parent / "node"
SIZE = 9


@pytest.fixture(scope="module")
def sabaki_modules(tmp_path_factory) -> Path:
    """node_modules holding @sabaki/gtp, installed by `npm ci` from the committed lockfile."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("node and npm are needed to run Sabaki's GTP client")
    where = tmp_path_factory.mktemp("sabaki")
    for name in ("package.json", "package-lock.json"):
        shutil.copy(NODE_DIR / name, where / name)
    subprocess.run(["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=where, check=True,
                   capture_output=True, timeout=300)
    return where / "node_modules"


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory) -> Path:
    import torch

    from gocore.nn.nets import NetConfig, build_net
    from storage.checkpoints import save_model

    torch.manual_seed(0)
    config = NetConfig(board_size=SIZE, in_planes=17, encoder="agz17", blocks=1, filters=8, value_hidden=16)
    return save_model(tmp_path_factory.mktemp("net") / "tiny", build_net(config).eval(), dataclasses.asdict(config))


def vertex_is_on_board(vertex: str) -> bool:
    column, row = vertex[0].upper(), int(vertex[1:])
    return column in "ABCDEFGHJ" and 1 <= row <= SIZE


def test_sabaki_drives_analysis_and_parses_every_line(sabaki_modules, model_dir):
    env = {**os.environ, "NODE_PATH": str(sabaki_modules)}
    session = subprocess.run(["node", str(NODE_DIR / "sabaki_session.js"), sys.executable, str(model_dir)],
                             capture_output=True, text=True, timeout=120, env=env, cwd=Path.cwd())
    assert session.returncode == 0, session.stderr
    result = json.loads(session.stdout)
    assert {"lz-analyze", "kata-analyze", "lz-genmove_analyze", "kata-genmove_analyze"} <= set(result["commands"])
    assert result["known"] == "true"
    assert result["boardsize13"]["error"] and result["boardsize13"]["content"] == "unacceptable size"
    for kind in ("lz", "kata"):
        analysis = result[kind]
        assert not analysis["error"] and analysis["next"] == "gozero"  # stopped by the next command
        assert len(analysis["updates"]) >= 2 and len(analysis["updates"]) == len(analysis["lines"])
        for variations in analysis["updates"]:
            assert variations, "Sabaki found no variation in a line"
            for v in variations:
                assert 0 <= v["winrate"] <= 100 and v["visits"] >= 0 and v["scoreLead"] is None
                assert vertex_is_on_board(v["move"]) and v["pv"][0] == v["move"]
                assert all(vertex_is_on_board(x) for x in v["pv"])
        totals = [sum(v["visits"] for v in variations) for variations in analysis["updates"]]
        assert totals[-1] > totals[0]  # the search went on between updates
    assert len(result["kata"]["updates"][-1]) >= 4  # minmoves
    genmove = result["genmove"]
    assert not genmove["error"] and genmove["content"].split("\n")[-1].startswith("play ")
    played = genmove["content"].split("\n")[-1].split()[1]
    assert vertex_is_on_board(played) and genmove["updates"]
    assert result["replay"]["error"] and result["replay"]["content"] == "illegal move"  # white's stone is there
