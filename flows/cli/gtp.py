"""`gozero gtp`: play over GTP v2 on stdin/stdout (Sabaki, GoGui, GNU Go) with a model or an agent.

A typer command that flows/cli/root.py mounts with ``app.command()(gtp)``. GUIs start engines often, so
startup stays light: torch, MLflow and the search are imported only for a model. The engine itself
is `gocore.play.gtp.GtpEngine`; with a model it also answers lz-analyze / kata-analyze and their
genmove forms (`gocore.play.gtp_analysis`), searching until the next command or `--ponder` visits.

stdout carries GTP and nothing else: while the command runs, file descriptor 1 points at stderr and
the protocol goes to a private copy of the original stdout, so no stray print (ours, a library's, C
code's) can break a GUI's parser. Logs go to stderr. Whatever stops the engine from starting (a
model that cannot be loaded, a bad agent spec) is one line on stderr and exit code 1 (`name` and
`protocol_version` may have been answered while the net loaded); the process ends with
`os._exit`, as the thread reading stdin may still hold it.
"""

from __future__ import annotations

import logging
import sys
from importlib import metadata
from pathlib import Path
from typing import Annotated

import typer

from flows.cli.common import DATA_DIR_HELP, DEVICE_HELP, THREADS_HELP, protocol_streams, use_threads
from tasks.app.players import SPECS_HELP

PONDER_HELP = ("root visits at which lz-/kata-analyze stop searching and wait for the next command (default: the "
               "same ~217 MB of search tree at most on every board: 20,000 visits on 9x9 at up to about 10.8 KB "
               "each, 11,660 on 13x13, 6,105 on 19x19 at up to about 35 KB each)")


def gtp(
    model: Annotated[str | None, typer.Option(help="models:/NAME@ALIAS, models:/NAME/VERSION or a model directory "
                                              "(default: the champion of the board size, models:/gozero-<N>x<N>"
                                              "@champion, loaded again on each boardsize N); with "
                                              "--agent alphago: POLICY,VALUE[,ROLLOUT]")] = None,
    agent: Annotated[str | None, typer.Option(help=f"play this player instead of a model: {SPECS_HELP}")] = None,
    sims: Annotated[int, typer.Option(min=1, help="search simulations per move (with a model)")] = 400,
    size: Annotated[int | None, typer.Option(min=5, max=19, help="initial board size (default: the model's, else 9; "
                                             "a size the model contradicts is refused)")] = None,
    komi: Annotated[float, typer.Option(help="komi until the controller sends one")] = 7.5,
    seed: Annotated[int, typer.Option(help="random seed of the agent and of kgs-genmove_cleanup")] = 0,
    ponder: Annotated[int | None, typer.Option(min=1, help=PONDER_HELP)] = None,
    data_dir: Annotated[Path | None, typer.Option(help=DATA_DIR_HELP)] = None,
    threads: Annotated[int | None, typer.Option(min=1, help=THREADS_HELP + " (with a model)")] = None,
    device: Annotated[str, typer.Option(help=DEVICE_HELP + " (with a model)")] = "auto",
    verbose: Annotated[bool, typer.Option(help="log more (INFO) to stderr; refused commands are always logged")] = False,
) -> None:
    """Play Go over GTP v2 on stdin/stdout, for GUIs and other engines."""
    logging.basicConfig(stream=sys.stderr, level=logging.INFO if verbose else logging.WARNING,
                        format="gozero gtp: %(levelname)s %(message)s")
    if model is not None and agent is not None:
        if agent.partition(":")[0].partition("-")[0] != "alphago" or ":" in agent:
            raise _fail("give --model or --agent, not both (but --agent alphago --model POLICY,VALUE[,ROLLOUT])")
        agent, model = f"{agent}:{model}", None  # AlphaGo's search over these two nets
    from gocore.errors import GozeroError
    from gocore.nn.device import choose_device
    from tasks.app.players import parse_player
    from tasks.app.sizes import resolve_size

    try:  # a bad spec or device, or a --size its model contradicts, is refused before anything answers
        if device != "auto":  # auto is always there; torch loads later, while name is answered
            choose_device(device)
        if agent is not None:
            parse_player(agent)
        if model is not None:  # the net that ships with gozero: registered in the data dir on first use
            from storage.shipped import prepared

            model = prepared(model, data_dir)
        resolve_size(size, agent or model)
    except GozeroError as error:
        raise _fail(str(error)) from None
    with protocol_streams() as (stdin, stdout):
        try:
            _session(stdin, stdout, agent, model, size, komi, sims, seed, ponder, data_dir, threads, device)
        except BaseException as error:  # noqa: BLE001 - every way out ends here, see _leave
            _leave(error, stdout)


def _session(stdin, stdout, agent: str | None, model: str | None, size: int | None, komi: float, sims: int,
             seed: int, ponder: int, data_dir: Path | None, threads: int | None, device: str = "auto") -> None:
    """Load the player (answering name and protocol_version meanwhile), then serve GTP until quit."""
    from gocore.play.gtp_analysis import LineReader
    from gocore.play.gtp_loading import load_answering

    lines = LineReader(stdin)  # name and protocol_version are answered while the net loads

    def load():
        from gocore.play.gtp import GtpEngine

        player = _player(agent, model, size, komi, sims, data_dir, threads, device)
        label = player.label if agent is not None else f"{_model_label(player.label, data_dir)}, {player.kind}"
        return player, label, GtpEngine

    player, label, GtpEngine = load_answering(load, lines, stdout, "gozero")
    # No --model: a boardsize N loads the champion of N (`ChampionsBySize`); else the size is the model's.
    champions = ChampionsBySize(player, seed, komi, sims, data_dir, device) if agent is None and model is None else None
    start = player.board_size or size or 9
    try:
        engine = GtpEngine(champions.agent if champions else player.make(seed), name="gozero",
                           version=f"{_package_version()} ({label})",
                           sizes=None if champions or player.board_size is None else {player.board_size},
                           size=start, komi=komi, seed=seed, ponder_limit=ponder)
        engine.serve(stdin, stdout, lines)
    finally:
        (champions or player).close()


def _leave(error: BaseException, stdout) -> None:
    """End the process for `error` without the interpreter's shutdown: the stdin reader thread may be
    blocked in a read holding stdin's lock, and CPython then aborts at exit (status 134). A failed
    start has written its one line (exit 1), a closed pipe ends quietly (0), Ctrl-C or SIGTERM
    print one line (130, 143), anything else its traceback (1)."""
    import contextlib
    import os
    import traceback

    from flows.cli.common import interrupted_by

    if isinstance(error, typer.Exit):
        code = error.exit_code
    elif isinstance(error, SystemExit):
        code = error.code if isinstance(error.code, int) else 1
    elif isinstance(error, BrokenPipeError):  # the controller went away: nothing left to answer
        code = 0
    elif isinstance(error, KeyboardInterrupt):
        signum = interrupted_by() or 2
        typer.echo("gozero gtp: interrupted", err=True)
        code = 128 + signum
    else:
        traceback.print_exception(error)
        code = 1
    for stream in (stdout, sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)


def _fail(message: str) -> typer.Exit:
    """Write one line on stderr and give the exit to raise."""
    typer.echo(f"error: {' '.join(message.split())}", err=True)
    return typer.Exit(1)


def _player(agent: str | None, model: str | None, size: int | None, komi: float, sims: int,
            data_dir: Path | None, threads: int | None, device: str = "auto"):
    """The `tasks.app.players` player of --agent, else of --model (default: the champion of --size);
    whatever refuses it becomes our one line."""
    from gocore.errors import GozeroError
    from tasks.app.models import default_model_uri, load_net
    from tasks.app.players import build_player, parse_player

    try:
        spec = agent or model or default_model_uri(size or 9)
        if agent is None:  # a net plays its own size: learn it before building the player
            use_threads(threads)
            board_size = load_net(spec, data_dir).config.board_size
            if size is not None and size != board_size:
                raise _fail(f"{spec} plays {board_size}x{board_size} only, not --size {size}")
            size = board_size
        elif (parsed := parse_player(spec)).kind in ("alphago", "model"):  # its (policy) net's size
            use_threads(threads)
            model = parsed.command[0] if parsed.command else spec if parsed.kind == "model" else None
            size = size or (load_net(model, data_dir).config.board_size if model else None)
        return build_player(spec, _settings(size or 9, komi, sims, device), data_dir)
    except GozeroError as error:
        hint = "" if agent else f" (or play without a model: --agent {SPECS_HELP})"
        raise _fail(f"{error}{hint}") from None


def _settings(size: int, komi: float, sims: int, device: str = "auto"):
    """How our players play over GTP: the most visited move from the start, resigning when lost;
    nets on `device`."""
    from tasks.app.players import PlayerSettings

    return PlayerSettings(size=size, komi=komi, sims=sims, sample_opening=False, resign_threshold=-0.9,
                          device=device)


class ChampionsBySize:
    """Without --model, the champion of each board size a controller asks for
    (``models:/gozero-<N>x<N>@champion``), loaded at its `boardsize` and kept: `agent` is the
    `GtpEngine`'s agent factory, and a size without a champion is a GTP error, not a crash."""

    def __init__(self, first, seed: int, komi: float, sims: int, data_dir: Path | None, device: str = "auto"):
        self.players, self.agents = {first.board_size: first}, {}
        self.seed, self.komi, self.sims, self.data_dir, self.device = seed, komi, sims, data_dir, device

    def agent(self, size: int, komi: float):
        """The agent of the champion of `size` (komi: the agent reads it from the position)."""
        if size not in self.agents:
            if size not in self.players:
                self.players[size] = self._load(size)
            self.agents[size] = self.players[size].make(self.seed)
        return self.agents[size]

    def _load(self, size: int):
        from gocore.errors import GozeroError
        from gocore.play.gtp_protocol import GtpFailure
        from tasks.app.models import default_model_uri
        from tasks.app.players import build_player

        try:
            return build_player(default_model_uri(size), _settings(size, self.komi, self.sims, self.device),
                                self.data_dir)
        except GozeroError as error:
            raise GtpFailure(" ".join(f"no champion for {size}x{size}: {error}".split())) from None

    def close(self) -> None:
        """Stop every player loaded (nets: nothing to stop; kept for symmetry with `Player.close`)."""
        for player in self.players.values():
            player.close()


def _model_label(spec: str, data_dir: Path | None) -> str:
    """A registered model as its version and ladder rank (GTP ``version``), else the spec."""
    from tasks.app.models import model_strength

    return model_strength(spec, data_dir) or spec


def _package_version() -> str:
    try:
        return metadata.version("gozero")
    except metadata.PackageNotFoundError:
        return "dev"
