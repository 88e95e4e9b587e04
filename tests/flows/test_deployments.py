"""README.md's Deployments block against a real Prefect server and process worker.

The block is taken from README.md and run as written, by bash, from the checkout: server, work
pool, `prefect deploy --all` of prefect.yaml, a process worker, and a `--watch`ed run of
`ingest/local-folder`; the only change is a free port instead of 4200. The walkthrough's self-play
games, which the block copies into `<data>/inbox`, are stood in for by 4 random games. Costs ~30-60 s
(server start, deploy, a worker run): the price of checking that what users type really runs.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from gocore.play.match import play_game
from gocore.rules import sgf, sgf_read
from gocore.search.agents import RandomAgent
from tests.test_readme import readme_blocks

REPO = Path(__file__).resolve().parents[2]
README_PORT = "127.0.0.1:4200"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def readme_deployment_script(port: int) -> str:
    """The README's Deployments block (marked ``# needs: server``), on `port` instead of 4200."""
    blocks = [block for block in readme_blocks() if block.heading.startswith("Deployments")
              and (block.needs or "").startswith("server")]
    assert len(blocks) == 1, "README.md's Deployments section must have one '# needs: server' block"
    script = blocks[0].script()
    assert README_PORT in script and "prefect server start" in script
    return script.replace(README_PORT, f"127.0.0.1:{port}")


def stop_group(pgid: int, seconds: float = 30) -> None:
    """SIGTERM every process the script left running (server, worker), then SIGKILL stragglers."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(pgid, sig)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                os.killpg(pgid, 0)
            except ProcessLookupError:
                return
            time.sleep(0.5)


def write_games(folder: Path, count: int) -> int:
    """`count` random 9x9 games as SGF in `folder`; returns their total number of moves."""
    folder.mkdir(parents=True)
    moves = 0
    for i in range(count):
        game = play_game(RandomAgent(seed=i), RandomAgent(seed=100 + i), size=9, max_moves=60)
        record = sgf.GameRecord(size=9, komi=7.5, moves=game.moves, winner=game.winner, result=game.result)
        (folder / f"g{i}.sgf").write_text(sgf.write(record))
        moves += len(sgf_read.read_games((folder / f"g{i}.sgf").read_text())[0].moves)
    return moves


def test_the_readme_deployments_block_runs_local_folder_on_a_process_worker(tmp_path: Path) -> None:
    data = tmp_path / "data"
    moves = write_games(data / "selfplay" / "gen=0" / "games", 4)  # what the walkthrough's self-play left
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_", "GOZERO_", "MLFLOW_"))}
    env.update(PREFECT_HOME=str(tmp_path / "prefect"), PREFECT_SERVER_API_PORT=str(port),
               PREFECT_SERVER_ANALYTICS_ENABLED="false", DO_NOT_TRACK="true", GOZERO_DATA=str(data),
               PYTHONPATH=str(REPO),  # this checkout's code, even if the venv's editable install is another's
               PATH=f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}")  # the venv, as if activated
    script = readme_deployment_script(port)
    log = tmp_path / "script.log"
    with log.open("w") as out:
        shell = subprocess.Popen(["bash", "-c", "set -eo pipefail\n" + script], cwd=REPO, env=env,
                                 stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                 start_new_session=True)
    try:
        code = shell.wait(timeout=420)
    except subprocess.TimeoutExpired:
        code = None
    finally:
        stop_group(shell.pid)
    assert code == 0, f"README Deployments block {'timed out' if code is None else f'exited {code}'}:\n" \
                      f"--- script\n{script}--- output\n{log.read_text()[-6000:]}"

    from storage import datasets

    manifest = datasets.read_manifest(data / "datasets" / "inbox")
    assert manifest["sources"] == ["data:inbox"]
    assert manifest["games_accepted"] == 4 and manifest["rows"] == moves * 8
