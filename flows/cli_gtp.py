"""`gozero gtp`: play over GTP v2 on stdin/stdout (Sabaki, GoGui, KaTrain, GNU Go) with a model or an agent.

A typer command that flows/cli.py mounts with ``app.command()(gtp)``. GUIs start engines often, so
startup stays light: torch, MLflow and the search are imported only for a model. The engine itself
is `gocore.play.gtp.GtpEngine`.

stdout carries GTP and nothing else: while the command runs, file descriptor 1 points at stderr and
the protocol goes to a private copy of the original stdout, so no stray print (ours, a library's, C
code's) can break a GUI's parser. Logs go to stderr. Whatever stops the engine from starting (a
model that cannot be loaded, a bad agent spec) is one line on stderr and exit code 1, before the
first command is read.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import sys
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path
from typing import Annotated, TextIO

import typer

AGENT_SPECS = "random, or uct[-SIMULATIONS], e.g. uct-800"


def gtp(
    model: Annotated[str | None, typer.Option(help="models:/NAME@ALIAS, models:/NAME/VERSION or a model directory "
                                              "(default: models:/gozero-<SIZE>x<SIZE>@champion)")] = None,
    agent: Annotated[str | None, typer.Option(help=f"play a built-in agent instead of a model: {AGENT_SPECS}")] = None,
    sims: Annotated[int, typer.Option(min=1, help="search simulations per move (with a model)")] = 400,
    size: Annotated[int | None, typer.Option(min=5, max=19, help="initial board size (default: the model's, else 9)")] = None,
    komi: Annotated[float, typer.Option(help="komi until the controller sends one")] = 7.5,
    seed: Annotated[int, typer.Option(help="random seed of the agent and of kgs-genmove_cleanup")] = 0,
    data_dir: Annotated[Path | None, typer.Option(help="data dir (default $GOZERO_DATA or ./gozero-data)")] = None,
    verbose: Annotated[bool, typer.Option(help="log more (INFO) to stderr; refused commands are always logged")] = False,
) -> None:
    """Play Go over GTP v2 on stdin/stdout, for GUIs and other engines."""
    logging.basicConfig(stream=sys.stderr, level=logging.INFO if verbose else logging.WARNING,
                        format="gozero gtp: %(levelname)s %(message)s")
    if model is not None and agent is not None:
        raise _fail("give --model or --agent, not both")
    with _protocol_streams() as (stdin, stdout):
        if agent is not None:
            player, sizes, label = _builtin_agent(agent, seed), None, agent
        else:
            player, board_size, label = _model_agent(model, size, sims, seed, data_dir)
            sizes, size = {board_size}, board_size
        from gocore.play.gtp import GtpEngine

        engine = GtpEngine(player, name="gozero", version=f"{_package_version()} ({label})", sizes=sizes,
                           size=size, komi=komi, seed=seed)
        try:
            engine.serve(stdin, stdout)
        except BrokenPipeError:  # the controller went away: nothing left to answer
            pass


def _fail(message: str) -> typer.Exit:
    """Write one line on stderr and give the exit to raise."""
    typer.echo(f"error: {' '.join(message.split())}", err=True)
    return typer.Exit(1)


@contextlib.contextmanager
def _protocol_streams() -> Iterator[tuple[TextIO, TextIO]]:
    """(stdin, stdout) for GTP, UTF-8 and split on LF only; fd 1 points at stderr meanwhile."""
    sys.stdout.flush()
    saved = os.dup(1)
    os.dup2(2, 1)
    stdout = io.TextIOWrapper(io.FileIO(os.dup(saved), "w"), encoding="utf-8", newline="\n")
    # newline="\n": a bare CR is not a line break in GTP, only a character preprocessing removes.
    stdin = io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace", newline="\n")
    try:
        yield stdin, stdout
    finally:
        with contextlib.suppress(BrokenPipeError):
            stdout.close()
        stdin.detach()  # sys.stdin still owns the buffer
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)


def _builtin_agent(spec: str, seed: int):
    """`flows.cli.make_agent`'s agent for `spec`; its refusal becomes our one line."""
    from flows.cli import make_agent

    try:
        return make_agent(spec, seed)
    except ValueError as error:
        raise _fail(str(error)) from None


def _model_agent(uri: str | None, size: int | None, sims: int, seed: int, data_dir: Path | None):
    """(AlphaGo Zero search on the net at `uri`, the board size it plays, a label for `version`)."""
    from storage import registry

    uri = uri or f"models:/{registry.model_name(size or 9)}@{registry.CHAMPION}"
    from gocore.nn.nets import build_net

    try:
        net, _config = registry.load(uri, build_net, data_dir)
    except (registry.RegistryError, OSError, ValueError) as error:
        raise _fail(f"{error} (or play without a model: --agent {AGENT_SPECS})") from None
    board_size = net.config.board_size
    if size is not None and size != board_size:
        raise _fail(f"{uri} plays {board_size}x{board_size} only, not --size {size}")
    try:
        from gocore.search import mcts
        from gocore.search.agents import AlphaZeroAgent
    except ImportError as error:
        raise _fail(f"this build cannot search with a net yet ({error}); use --agent") from None
    from gocore.nn.inference import NetEvaluator

    agent = AlphaZeroAgent(NetEvaluator(net), mcts.MATCH.replace(simulations=sims), seed=seed)
    return agent, board_size, f"{uri}, {sims} simulations"


def _package_version() -> str:
    try:
        return metadata.version("gozero")
    except metadata.PackageNotFoundError:
        return "dev"
