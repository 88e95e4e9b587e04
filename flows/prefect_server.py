"""The temporary Prefect server gozero starts for itself, owned by the CLI from start to stop.

Prefect's own `SubprocessASGIServer` starts uvicorn in the CLI's process group, so a terminal's
Ctrl-C kills it too, while the flow still has to record its state there (the CLI then retried
against a dead server for minutes), and it is stopped only at interpreter exit (a SIGKILLed CLI
left it running with parent 1). `OwnedServer` starts it in its own session, with a parent-death
signal (`gocore.children`), and `flows.runtime.prefect_api` stops it on the way out.

Its output goes to ``server.log`` in Prefect's home (under the data dir: `flows.cli.common.quiet_prefect`),
not the terminal. A server that cannot start fails in seconds with one line naming the cause:
Prefect's own start took a lifespan failure (exit 3, e.g. a database it cannot open) for a port in
use, retried on port after port for the whole 120-s timeout and printed every attempt's traceback
(840 lines with an unwritable home, issue "Every CPU-second counted, every failure in one line").
Imported only when a server is needed: Prefect's server modules take a while to import.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import prefect
from prefect.server.api.server import SubprocessASGIServer
from prefect.settings import get_current_settings

from gocore.children import die_with_parent_preexec, disown, own
from gocore.errors import GozeroError

PORT_TRIES = 5  # ports tried when the one found free was taken before uvicorn bound it
_PORT_TAKEN = re.compile(r"address already in use|errno 98", re.IGNORECASE)
_CAUSE = re.compile(r"^\s*([A-Za-z_][\w.]*(?:Error|Exception)): (.+)$")


class ServerStartError(GozeroError):
    """The temporary Prefect server did not start (the cause and its log in the message)."""


def server_log() -> Path:
    """Where the temporary server writes its output: ``server.log`` in Prefect's home."""
    return Path(get_current_settings().home).expanduser() / "server.log"


def failure_cause(log: str) -> str | None:
    """The last exception line (``sqlite3.OperationalError: unable to open database file``) in `log`."""
    causes = [match for line in log.splitlines() if (match := _CAUSE.match(line))]
    return f"{causes[-1][1]}: {causes[-1][2].strip()}" if causes else None


class OwnedServer(SubprocessASGIServer):
    """A temporary Prefect API server out of the terminal's reach that dies with this process."""

    _instances: dict[int | None, SubprocessASGIServer] = {}  # not shared with Prefect's own servers

    def start(self, timeout: int | None = None) -> None:
        """Start the server and wait until it answers, at most `timeout` s (default 120); a port
        taken meanwhile is retried on another, anything else fails now (ServerStartError)."""
        if self.running:
            return
        log = server_log()
        try:
            log.parent.mkdir(parents=True, exist_ok=True)
            log.open("a").close()
        except OSError as error:
            raise ServerStartError(f"cannot start a temporary Prefect server: cannot write its log {log}: "
                                   f"{error.strerror or error}") from None
        deadline = time.monotonic() + (timeout or 120)
        self.running = True
        try:
            for _ in range(PORT_TRIES):
                self.port = self.find_available_port()
                offset = log.stat().st_size
                self.server_process = self._run_uvicorn_command()
                if self._wait_until_up(log, offset, deadline):
                    return
            raise ServerStartError(f"the temporary Prefect server found no free port in {PORT_TRIES} tries; "
                                   f"its log: {log}")
        except BaseException:
            self.stop()
            raise

    def _wait_until_up(self, log: Path, offset: int, deadline: float) -> bool:
        """True once the server answers; False if it exited because its port was taken."""
        with httpx.Client(timeout=2.0) as client:
            while True:
                code = self.server_process.poll()
                if code is not None:
                    with log.open(errors="replace") as text:
                        text.seek(offset)
                        said = text.read()
                    if _PORT_TAKEN.search(said):
                        return False
                    cause = failure_cause(said) or f"it exited with code {code}"
                    raise ServerStartError(f"the temporary Prefect server could not start: {cause} "
                                           f"(Prefect's home {log.parent}; its log: {log})")
                try:
                    if client.get(f"{self.api_url}/health").status_code == 200:
                        return True
                except httpx.HTTPError:
                    pass
                if time.monotonic() > deadline:
                    raise ServerStartError(f"the temporary Prefect server did not answer within the timeout; "
                                           f"its log: {log}")
                time.sleep(0.1)

    def _run_uvicorn_command(self) -> subprocess.Popen[Any]:
        """Prefect's command and environment, in a new session and with a parent-death signal."""
        if self.server_process is not None:  # a retry on another port: the first attempt has exited
            disown(self.server_process)
        command = [sys.executable, "-m", "uvicorn", "--app-dir", str(prefect.__module_path__.parent),
                   "--factory", "prefect.server.api.server:create_app", "--host", "127.0.0.1",
                   "--port", str(self.port), "--log-level", "error", "--lifespan", "on"]
        env = {**os.environ, "PREFECT_UI_ENABLED": "0", "PREFECT__SERVER_EPHEMERAL": "1",
               "PREFECT__SERVER_FINAL": "1",
               **get_current_settings().to_environment_variables(exclude_unset=True)}
        with server_log().open("a") as log:  # the child keeps its own copy of the descriptor
            return own(subprocess.Popen(command, env=env, start_new_session=True, stdin=subprocess.DEVNULL,
                                        stdout=log, stderr=subprocess.STDOUT, preexec_fn=die_with_parent_preexec()))

    def stop(self) -> None:
        """Stop the server (SIGTERM, then SIGKILL after 5 s) and forget it."""
        process = self.server_process
        super().stop()
        if process is not None:
            disown(process)
