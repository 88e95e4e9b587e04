"""`gozero serve`: the Prefect UI and server, the deployments and a worker, and the MLflow UI, on one data dir.

The work is flows/service.py; this module parses the options, prints its progress and turns its
errors into one red line. flows/cli/root.py mounts `serve` as a command.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from flows.cli.common import DATA_DIR_HELP, console, user_errors


def serve(
    data_dir: Annotated[Path | None, typer.Option(help=DATA_DIR_HELP)] = None,
    prefect_port: Annotated[int, typer.Option(min=1, max=65535, help="port of the Prefect UI and API")] = 4200,
    mlflow_port: Annotated[int, typer.Option(min=1, max=65535, help="port of the MLflow UI")] = 5000,
    worker: Annotated[bool, typer.Option(help="start a process worker on the work pool")] = True,
) -> None:
    """Run the Prefect server, deployments, a worker and the MLflow UI on 127.0.0.1 until Ctrl-C."""
    from flows.service import ServeSettings
    from flows.service import serve as run_service
    from storage.layout import data_dir as resolve_data_dir

    settings = ServeSettings(resolve_data_dir(data_dir), prefect_port, mlflow_port, worker)
    with user_errors():
        run_service(settings, lambda line: console.print(line, soft_wrap=True, highlight=False, markup=False))
