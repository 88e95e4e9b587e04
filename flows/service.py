"""`gozero serve`: the Prefect server, the deployments, a process worker and the MLflow UI of one data dir.

`serve(settings, say)` holds the data dir's serve lock (a second serve is refused with the first's
pid and URLs), checks both ports before starting anything, then starts on 127.0.0.1: the Prefect
server (its database under ``<data>/prefect/``), waits for ``/api/health``, applies the deployments
(flows.deploy), starts a process worker on the pool, and the MLflow UI on the store every other
command uses for that data dir. Each child runs in its own process group with its output in
``<data>/serve/<name>.log``. Ctrl-C or SIGTERM, or any child exiting, stops every group it started
(and any process those started in a session of its own), waits for them and reaps them.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from flows.deploy import PROJECT, WORK_POOL, apply_deployments
from gocore.errors import GozeroError
from storage import layout, locks, mlflow_store

HOST = "127.0.0.1"
STARTUP_SECONDS = 180.0  # a cold Prefect server on a loaded 2-core machine takes 10-60 s
STOP_SECONDS = 20.0


class ServeError(GozeroError):
    """`gozero serve` cannot start or a child it started died; the message says which and why."""


@dataclass(frozen=True)
class ServeSettings:
    """What `gozero serve` runs, and where."""

    data: Path
    """the data dir (absolute): Prefect's database, the MLflow store, the worker's flows all use it"""
    prefect_port: int = 4200
    """port of the Prefect server (UI and API)"""
    mlflow_port: int = 5000
    """port of the MLflow UI"""
    worker: bool = True
    """start a process worker on the work pool (off: run one elsewhere)"""

    @property
    def prefect_url(self) -> str:
        """The Prefect UI."""
        return f"http://{HOST}:{self.prefect_port}"

    @property
    def prefect_api(self) -> str:
        """What PREFECT_API_URL must be for commands to report to this server."""
        return f"{self.prefect_url}/api"

    @property
    def mlflow_url(self) -> str:
        """The MLflow UI and tracking server."""
        return f"http://{HOST}:{self.mlflow_port}"


@dataclass
class Child:
    """One process `serve` started, leader of its own process group."""

    name: str
    process: subprocess.Popen
    log: Path
    descendants: set[int] = field(default_factory=set)

    def tail(self, lines: int = 5) -> str:
        """The last lines of its output, joined for a one-line error."""
        try:
            text = self.log.read_text(errors="replace").strip().splitlines()
        except OSError:
            return "no output"
        return " / ".join(text[-lines:]) or "no output"


def serve(settings: ServeSettings, say: Callable[[str], None]) -> None:
    """Run everything until Ctrl-C or SIGTERM, then stop it all and say so in a final line.
    ServeError if another serve holds the data dir, a port is taken, or a child fails."""
    with hold_data_dir(settings):
        stores = mlflow_store.ui_stores(settings.data)
        check_ports(settings, with_mlflow=stores is not None)
        children: list[Child] = []
        try:
            with interruptible():
                start_all(settings, stores, children, say)
                say_ready(settings, stores is not None, say)
                watch(children)
        except KeyboardInterrupt:
            say("stopping ...")
        finally:
            with signals_ignored():
                left = stop(children)
            names = ", ".join(child.name for child in children) or "nothing had started"
            say(f"gozero serve stopped: {names}; " + (f"still running: pids {sorted(left)}" if left
                                                       else "nothing it started is left running"))


@contextlib.contextmanager
def hold_data_dir(settings: ServeSettings) -> Iterator[None]:
    """One serve per data dir; the refusal names the running one's pid and URLs."""
    lock = layout.serve_lock(settings.data)
    details = {"prefect_url": settings.prefect_url, "mlflow_url": settings.mlflow_url}
    try:
        with locks.exclusive(lock, f"gozero serve of {settings.data}", details):
            yield
    except locks.BusyError:
        note = locks.holder(lock) or {}
        raise ServeError(f"gozero serve is already running on {settings.data} (pid {note.get('pid', '?')}): "
                         f"Prefect UI {note.get('prefect_url', '?')}, MLflow UI {note.get('mlflow_url', '?')}; "
                         "use it, or stop it first") from None


def check_ports(settings: ServeSettings, with_mlflow: bool) -> None:
    """ServeError naming the first port that is taken (or used twice), before anything starts."""
    ports = [("Prefect", settings.prefect_port)] + ([("MLflow", settings.mlflow_port)] if with_mlflow else [])
    if with_mlflow and settings.prefect_port == settings.mlflow_port:
        raise ServeError(f"--prefect-port and --mlflow-port are both {settings.prefect_port}; give two ports")
    for what, port in ports:
        with socket.socket() as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the servers do
            try:
                probe.bind((HOST, port))
            except OSError as error:
                raise ServeError(f"port {port} on {HOST} (for {what}) is not free ({error.strerror}); "
                                 f"stop what uses it or choose another --{what.lower()}-port") from None


def start_all(settings: ServeSettings, stores: tuple[str, str] | None, children: list[Child],
              say: Callable[[str], None]) -> None:
    """Start server and UI, deploy, start the worker; each added to `children` as soon as it runs."""
    data, env = settings.data, child_env(settings)
    prefect, mlflow = (str(Path(sys.executable).with_name(tool)) for tool in ("prefect", "mlflow"))
    say(f"starting the Prefect server (database {layout.prefect_database(data)}) ...")
    children.append(start(data, "prefect-server", [prefect, "server", "start", "--host", HOST,
                                                   "--port", str(settings.prefect_port)], env, PROJECT))
    if stores is not None:
        backend, artifacts = stores
        mlflow_store.client(data)  # create the store once, while Prefect starts: never raced by the UI
        say(f"starting the MLflow UI ({backend}) ...")
        children.append(start(data, "mlflow", [
            mlflow, "server", "--host", HOST, "--port", str(settings.mlflow_port), "--workers", "1",
            "--backend-store-uri", backend, "--serve-artifacts", "--artifacts-destination", artifacts],
            env | {"MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false"}, data))  # STACK-NOTES: 2.6 GB -> 0.5 GB
    wait_for_http(f"{settings.prefect_api}/health", children)
    say(f"applying the deployments (work pool {WORK_POOL}) ...")
    apply_deployments(settings.prefect_api)
    if settings.worker:
        children.append(start(data, "worker", [prefect, "worker", "start", "--pool", WORK_POOL], env, PROJECT))
    if stores is not None:
        wait_for_http(f"{settings.mlflow_url}/health", children)


def child_env(settings: ServeSettings) -> dict[str, str]:
    """The environment of every child: Prefect's home and database in the data dir, our server's API."""
    home = layout.prefect_home(settings.data)
    home.mkdir(parents=True, exist_ok=True)
    return {**os.environ, "PREFECT_HOME": str(home), "GOZERO_DATA": str(settings.data),
            "PREFECT_API_DATABASE_CONNECTION_URL": f"sqlite+aiosqlite:///{layout.prefect_database(settings.data)}",
            "PREFECT_API_URL": settings.prefect_api,
            "PREFECT_SERVER_ANALYTICS_ENABLED": os.environ.get("PREFECT_SERVER_ANALYTICS_ENABLED", "false"),
            "MLFLOW_DISABLE_TELEMETRY": os.environ.get("MLFLOW_DISABLE_TELEMETRY", "true")}


def start(data: Path, name: str, command: list[str], env: dict[str, str], cwd: Path) -> Child:
    """Start `command` as the leader of a new process group (so Ctrl-C here does not reach it)."""
    log = layout.serve_log(data, name)
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("a") as out:
        process = subprocess.Popen(command, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=out,
                                   stderr=subprocess.STDOUT, start_new_session=True)
    return Child(name, process, log)


def wait_for_http(url: str, children: list[Child], seconds: float = STARTUP_SECONDS) -> None:
    """Return once `url` answers 200; ServeError if a child exits first or time runs out."""
    deadline = time.monotonic() + seconds
    while True:
        check_alive(children)
        with contextlib.suppress(OSError):
            with urllib.request.urlopen(url, timeout=2) as answer:
                if answer.status == 200:
                    return
        if time.monotonic() > deadline:
            raise ServeError(f"{url} did not answer within {seconds:.0f} s; see "
                             + ", ".join(str(child.log) for child in children))
        time.sleep(0.5)


def check_alive(children: list[Child]) -> None:
    """ServeError naming the first child that has exited, with the end of its log."""
    for child in children:
        code = child.process.poll()
        if code is not None:
            raise ServeError(f"{child.name} exited with code {code} ({child.log}): {child.tail()}")


def watch(children: list[Child]) -> None:
    """Block until a child exits (ServeError) or a signal interrupts."""
    while True:
        check_alive(children)
        time.sleep(1)


def say_ready(settings: ServeSettings, with_mlflow: bool, say: Callable[[str], None]) -> None:
    """Both URLs and the exports other commands need to use this server and store."""
    say(f"Prefect UI  {settings.prefect_url}" + ("" if settings.worker else " (no worker: start one on "
                                                  f"the pool {WORK_POOL})"))
    say(f"MLflow UI   {settings.mlflow_url}" if with_mlflow else
        f"MLflow      {mlflow_store.tracking_uri(settings.data)} (MLFLOW_TRACKING_URI: not started here)")
    say("in another shell, for the other gozero and prefect commands:")
    say(f"  export GOZERO_DATA={settings.data}")
    say(f"  export PREFECT_API_URL={settings.prefect_api}")
    if with_mlflow:
        say(f"  export MLFLOW_TRACKING_URI={settings.mlflow_url}")
    say("Ctrl-C stops everything gozero serve started")


def stop(children: list[Child]) -> set[int]:
    """SIGTERM each child's group and what it started elsewhere, wait, SIGKILL stragglers, reap;
    returns the pids still running (none, unless a process ignores SIGKILL's reach)."""
    for child in children:
        child.descendants = descendants(child.process.pid)
    for sig, seconds in ((signal.SIGTERM, STOP_SECONDS), (signal.SIGKILL, 5.0)):
        for child in children:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(child.process.pid, sig)
            for pid in child.descendants:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, sig)
        deadline = time.monotonic() + seconds
        while any(is_running(child) for child in children) and time.monotonic() < deadline:
            time.sleep(0.2)
    for child in children:
        with contextlib.suppress(subprocess.TimeoutExpired):
            child.process.wait(timeout=1)
    table = _processes()
    return {pid for child in children for pid, (_, pgid) in table.items()
            if pgid == child.process.pid or pid in child.descendants}


def is_running(child: Child) -> bool:
    """Whether the child, anything in its group, or a process it had started still runs (not a zombie)."""
    child.process.poll()  # reap the leader
    group = child.process.pid
    if not Path("/proc/self/stat").exists():  # no /proc: the group's existence (zombies count)
        try:
            os.killpg(group, 0)
        except (ProcessLookupError, PermissionError):
            return False
        return True
    return any(pgid == group or pid in child.descendants for pid, (_, pgid) in _processes().items())


def descendants(root: int) -> set[int]:
    """Every running process below `root` (children that left its group included)."""
    table = _processes()
    found, frontier = set(), [root]
    while frontier:
        parent = frontier.pop()
        children = [pid for pid, (ppid, _) in table.items() if ppid == parent and pid not in found]
        found.update(children)
        frontier.extend(children)
    return found


def _processes() -> dict[int, tuple[int, int]]:
    """pid -> (parent pid, process group) of every live, non-zombie process, from /proc."""
    table = {}
    for entry in Path("/proc").iterdir() if Path("/proc/self/stat").exists() else []:
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rpartition(")")[2].split()
        except OSError:
            continue
        if fields and fields[0] not in ("Z", "X"):
            table[int(entry.name)] = (int(fields[1]), int(fields[2]))
    return table


def interruptible() -> contextlib.AbstractContextManager[None]:
    """SIGINT and SIGTERM raise KeyboardInterrupt, so `kill PID` stops as cleanly as Ctrl-C, and Ctrl-C
    works even where a shell started us with SIGINT ignored (a background job of a script)."""
    return _stop_signals(signal.default_int_handler)


def signals_ignored() -> contextlib.AbstractContextManager[None]:
    """A second Ctrl-C must not cut the stopping short and leave processes behind."""
    return _stop_signals(signal.SIG_IGN)


@contextlib.contextmanager
def _stop_signals(handler: Any) -> Iterator[None]:
    """SIGINT and SIGTERM handled by `handler` inside the block, as before it afterwards."""
    previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, restored in previous.items():
            signal.signal(sig, restored)
