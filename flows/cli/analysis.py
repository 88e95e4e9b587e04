"""`gozero analysis`: KataGo's JSON analysis engine on stdin/stdout, for KaTrain, with a model.

A typer command that flows/cli/root.py mounts with ``app.command("analysis")``. KaTrain starts it in
place of ``katago analysis`` (its engine setting "altcommand"). The model is loaded once, before
the first line is read; one that cannot be loaded is one line on stderr and exit code 1. The engine
is `gocore.play.analysis_server.AnalysisServer` (the protocol: `gocore.play.analysis_engine`);
``--tree-memory`` bounds the search tree of one query (KaTrain ponders with 10,000,000 visits).
As with `gozero gtp`, stdout carries the protocol only (`flows.cli.common.protocol_streams`).
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import Annotated

import typer

from flows.cli.common import (
    DATA_DIR_HELP,
    DEVICE_HELP,
    THREADS_HELP,
    checked_device,
    fail,
    protocol_streams,
    shipped_ready,
    use_threads,
    user_errors,
)


def analysis(
    model: Annotated[str | None, typer.Option(help="models:/NAME@ALIAS, models:/NAME/VERSION or a model directory "
                                              "(default: models:/gozero-<SIZE>x<SIZE>@champion)")] = None,
    visits: Annotated[int, typer.Option(min=1, help="root visits per position when a query sets no maxVisits")] = 200,
    tree_memory: Annotated[float, typer.Option(min=1, help="MB of search tree one query may grow (a larger "
                                               "maxVisits is searched to what fits, with a warning)")] = 1000,
    size: Annotated[int | None, typer.Option(min=5, max=19, help="board size of the default model (default: "
                                             "the --model's, else 9; a size it contradicts is refused)")] = None,
    data_dir: Annotated[Path | None, typer.Option(help=DATA_DIR_HELP)] = None,
    threads: Annotated[int | None, typer.Option(min=1, help=THREADS_HELP)] = None,
    device: Annotated[str, typer.Option(help=DEVICE_HELP)] = "auto",
) -> None:
    """Answer KataGo analysis-engine JSON queries (one per line) on stdin/stdout, for KaTrain."""
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="gozero analysis: %(levelname)s %(message)s")
    from tasks.app.sizes import resolve_size

    checked_device(device)
    model = shipped_ready(data_dir, model)[0]
    with user_errors():
        given, size = size, resolve_size(size, model)
    with protocol_streams() as (stdin, stdout):
        from gocore.nn.inference import NetEvaluator
        from gocore.play.analysis_server import AnalysisServer
        from gocore.play.gtp_analysis import visits_for_memory
        from tasks.app.models import conv_path_for, default_model_uri, load_model

        use_threads(threads)
        with user_errors():
            loaded = load_model(model or default_model_uri(size), data_dir)
        board_size = loaded.net.config.board_size
        if given is not None and board_size != given:  # a model whose name did not say its size
            raise fail(f"--size {given} contradicts {loaded.version} ({board_size}x{board_size})")
        evaluator = NetEvaluator(loaded.net, device=device, conv_path=conv_path_for(loaded.net, data_dir, device))
        server = AnalysisServer(evaluator, board_size, visits, name=f"gozero ({loaded.version})",
                                stdout=stdout, max_visits=visits_for_memory(tree_memory, board_size))
        try:
            server.serve(stdin)
        except BrokenPipeError:  # KaTrain went away: nothing left to answer
            pass
