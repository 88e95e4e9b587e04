"""Fixed costs: how long one-line answers take, cold and warm, beside the slow path they replaced.

    python -m benchmarks.fixed_costs [--data-dir D] [--repeats 3]

Sets up (once, in ``--data-dir``, default a temporary one) a toy loop (`gozero loop --settings
quick-5x5 --generations 1`, a minute or two) so that there are registered models and self-play
on disk, then times each command in a fresh process, the first run (cold: first start of the
interpreter on these files) and the median of ``--repeats`` more (warm):

- ``gozero --help``;
- ``gozero models list``: ours (sqlite3 on the registry file, `storage.registry_records`) beside the
  baseline, the same listing through the MLflow client (`storage.registry.list_versions`);
- ``gozero gtp``: the first answer (``name``, answered while the net loads) beside the first answer
  that needs the net (``genmove b``);
- a rerun of ``gozero selfplay`` that has nothing left to do (its games are on disk), without and
  with ``PREFECT_API_URL`` pointing at a running Prefect server (then no temporary server starts).

Targets (issue #27): models list <= 3 s, gtp first answer <= 3 s, a no-op rerun <= 10 s. The last
line is ``fixed_costs: models_list=<s> (mlflow <s>, ratio <x>) gtp_first=<s> noop_rerun=<s> ...``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GOZERO = [sys.executable, "-m", "flows.cli"]
TARGETS = {"models list": 3.0, "gtp first answer": 3.0, "no-op selfplay rerun": 10.0,
           "no-op selfplay rerun (server)": 10.0}
MLFLOW_LIST = ("from storage import registry\n"
               "print(len([v for n in registry.list_models() for v in registry.list_versions(n)]))")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=None, help="where the toy loop lives (default: temp)")
    parser.add_argument("--repeats", type=int, default=3, help="warm runs after the cold one")
    return parser.parse_args(argv)


def environment(data: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PREFECT_API_URL", "MLFLOW_TRACKING_URI")}
    return {**env, "GOZERO_DATA": str(data), "PYTHONPATH": str(ROOT), **extra}


def seconds(command: list[str], env: dict[str, str], stdin: str | None = None) -> float:
    """Wall seconds of `command` run to its end; RuntimeError with its stderr if it fails."""
    start = time.perf_counter()
    done = subprocess.run(command, env=env, input=stdin, capture_output=True, text=True, cwd=ROOT, timeout=600)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed ({done.returncode}): {done.stderr[-2000:]}")
    return time.perf_counter() - start


def gtp_answers(env: dict[str, str], model: str) -> tuple[float, float]:
    """(seconds to the answer of `name`, seconds to the answer of the first `genmove b`) of a new engine."""
    start = time.perf_counter()
    engine = subprocess.Popen([*GOZERO, "gtp", "--model", model, "--sims", "8", "--size", "5"], env=env, cwd=ROOT,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert engine.stdin is not None and engine.stdout is not None

    def answer(command: str) -> float:
        engine.stdin.write(command + "\n")
        engine.stdin.flush()
        line = engine.stdout.readline()
        while engine.stdout.readline().strip():  # an answer ends with an empty line
            pass
        if not line.startswith("="):
            raise RuntimeError(f"gtp {command!r} answered {line!r}")
        return time.perf_counter() - start

    try:
        return answer("name"), answer("genmove b")
    finally:
        engine.stdin.write("quit\n")
        engine.stdin.flush()
        engine.wait(timeout=60)


def cold_and_warm(measure: Callable[[], float], repeats: int) -> tuple[float, float]:
    """(the first measurement, the median of `repeats` more)."""
    cold = measure()
    return cold, statistics.median(measure() for _ in range(max(1, repeats)))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def prefect_server(env: dict[str, str]) -> tuple[subprocess.Popen, str]:
    """A Prefect server on a free port (its own PREFECT_HOME in the data dir); (process, API URL)."""
    port = free_port()
    process = subprocess.Popen([sys.executable, "-m", "prefect", "server", "start", "--host", "127.0.0.1",
                                "--port", str(port)], env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, start_new_session=True)
    url = f"http://127.0.0.1:{port}/api"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                probe = subprocess.run([sys.executable, "-c", f"import urllib.request; urllib.request.urlopen("
                                        f"'{url}/health', timeout=2)"], capture_output=True)
                if probe.returncode == 0:
                    return process, url
        except OSError:
            pass
        time.sleep(0.5)
    process.kill()
    raise RuntimeError("the Prefect server did not start in 120 s")


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    temp = None if args.data_dir else tempfile.mkdtemp(prefix="gozero-fixed-costs-")
    data = (args.data_dir or Path(temp)).resolve()
    env = environment(data, PREFECT_HOME=str(data / "prefect-home"))
    try:
        if not (data / "loops" / "quick-5x5").exists():
            print(f"setting up a toy loop in {data} (gozero loop --settings quick-5x5 --generations 1) ...",
                  flush=True)
            seconds([*GOZERO, "loop", "--settings", "quick-5x5", "--generations", "1", "--workers", "1"], env)
        model = "models:/gozero-5x5/1"
        selfplay = [*GOZERO, "selfplay", "--model", model, "--games", "2", "--sims", "4", "--size", "5",
                    "--generation", "90", "--workers", "1"]
        seconds(selfplay, env)  # its games are on disk: every run below has nothing to do
        rows: list[tuple[str, float, float, float | None]] = []

        def add(name: str, cold: float, warm: float, baseline: float | None = None) -> None:
            rows.append((name, cold, warm, baseline))
            print(f"  {name:<32} cold {cold:6.2f} s  warm {warm:6.2f} s"
                  + (f"  baseline {baseline:6.2f} s  ratio {baseline / warm:5.1f}x" if baseline else ""), flush=True)

        add("gozero --help", *cold_and_warm(lambda: seconds([*GOZERO, "--help"], env), args.repeats))
        mlflow_cold, mlflow_warm = cold_and_warm(lambda: seconds([sys.executable, "-c", MLFLOW_LIST], env),
                                                 args.repeats)
        add("models list", *cold_and_warm(lambda: seconds([*GOZERO, "models", "list"], env), args.repeats),
            mlflow_warm)
        first = [gtp_answers(env, model) for _ in range(1 + args.repeats)]
        add("gtp first answer", first[0][0], statistics.median(a for a, _ in first[1:]))
        add("gtp first genmove", first[0][1], statistics.median(b for _, b in first[1:]))
        add("no-op selfplay rerun", *cold_and_warm(lambda: seconds(selfplay, env), args.repeats))
        server, url = prefect_server(env)
        try:
            with_api = environment(data, PREFECT_HOME=str(data / "prefect-home"), PREFECT_API_URL=url)
            add("no-op selfplay rerun (server)", *cold_and_warm(lambda: seconds(selfplay, with_api), args.repeats))
        finally:
            os.killpg(server.pid, 15)
            server.wait(timeout=60)
        print(f"  (MLflow listing cold {mlflow_cold:.2f} s)")
        for name, _, warm, _ in rows:
            if name in TARGETS:
                verdict = "met" if warm <= TARGETS[name] else "MISSED"
                print(f"  target {name} <= {TARGETS[name]:g} s: {verdict} ({warm:.2f} s warm)")
        figures = {name: warm for name, _, warm, _ in rows}
        print(f"fixed_costs: models_list={figures['models list']:.2f}s (mlflow {mlflow_warm:.2f}s, ratio "
              f"{mlflow_warm / figures['models list']:.1f}x) gtp_first={figures['gtp first answer']:.2f}s "
              f"gtp_genmove={figures['gtp first genmove']:.2f}s noop_rerun={figures['no-op selfplay rerun']:.2f}s "
              f"noop_rerun_server={figures['no-op selfplay rerun (server)']:.2f}s help={figures['gozero --help']:.2f}s")
    finally:
        if temp:
            shutil.rmtree(temp, ignore_errors=True)


if __name__ == "__main__":
    main()
