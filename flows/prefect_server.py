"""The temporary Prefect server gozero starts for itself, owned by the CLI from start to stop.

Prefect's own `SubprocessASGIServer` starts uvicorn in the CLI's process group, so a terminal's
Ctrl-C kills it too, while the flow still has to record its state there (the CLI then retried
against a dead server for minutes), and it is stopped only at interpreter exit (a SIGKILLed CLI
left it running with parent 1). `OwnedServer` starts it in its own session, with a parent-death
signal (`gocore.children`), and `flows.runtime.prefect_api` stops it on the way out.
Imported only when a server is needed: Prefect's server modules take a while to import.
"""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import prefect
from prefect.server.api.server import SubprocessASGIServer
from prefect.settings import get_current_settings

from gocore.children import die_with_parent_preexec, disown, own


class OwnedServer(SubprocessASGIServer):
    """A temporary Prefect API server out of the terminal's reach that dies with this process."""

    _instances: dict[int | None, SubprocessASGIServer] = {}  # not shared with Prefect's own servers

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
        return own(subprocess.Popen(command, env=env, start_new_session=True,
                                    preexec_fn=die_with_parent_preexec()))

    def stop(self) -> None:
        """Stop the server (SIGTERM, then SIGKILL after 5 s) and forget it."""
        process = self.server_process
        super().stop()
        if process is not None:
            disown(process)
