"""Players by name: the one parser of player specs, and the agents they build.

Every place a player is named (`gozero play`, `gozero gtp --agent`, `gozero evaluate`, the gates
and ladders of the loops) goes through `parse_player` and `build_player`; `ladder_name` is the
name the Elo ladder and the ratings table know a player by (and `ladder_spec` the way back):

    random                   uniform random legal moves (never fills its own eyes)
    uct | uct-N              UCT with random playouts, N simulations per move (default: sims)
    gnugo | gnugo-L          GNU Go at level L (default 5) over GTP: Chinese rules, positional
                             superko, --capture-all-dead, the board size and komi of the game
    gtp:COMMAND              any GTP engine, e.g. ``gtp:gnugo --mode gtp --level 1`` (split like
                             a shell; ``gnugo`` is also found at /usr/games/gnugo)
    models:/NAME@ALIAS, models:/NAME/VERSION, an artifact URI (``scheme://...``), a model directory
                             a net, playing as what it is: a dual net by AlphaGo Zero's PUCT search
                             (sims simulations), a policy (SL or RL) net by its most probable move,
                             a value net by the move after which its value is best (one ply)
    alphazero-N[,score=W]:MODEL
                             a dual net (a model spec as above) searching N simulations a move
                             whatever the match's sims: one net against itself at other budgets;
                             ``score=W`` mixes the net's score lead into the values its search
                             backs up with weight W (gocore.search.score_utility; a score head needed)
    alphago[-N][:POLICY,VALUE[,ROLLOUT]]
                             AlphaGo's search (N simulations, default: sims): POLICY's priors, leaf
                             value (1 - lambda) v + lambda z_rollout with VALUE's v; the two are model
                             specs as above, by default the champions of gozero-<N>x<N>-policy, -value

Nets are loaded once per process (`tasks.app.models`).
"""

from __future__ import annotations

import re
import shlex
import shutil
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from gocore.errors import GozeroError
from tasks.app.models import ModelError, conv_path_for, load_model

if TYPE_CHECKING:  # the engine loads with the first player built: `gozero --help` stays fast
    from gocore.play.match import GtpAgent
    from gocore.search.agents import Agent

DEFAULT_GNUGO_LEVEL = 5
KINDS = ("random", "uct", "gnugo", "gtp", "model", "alphago")
_REGISTERED = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*/\d+")  # a ladder name NAME/VERSION
SPECS_HELP = ("random, uct[-N], gnugo[-LEVEL], 'gtp:COMMAND', alphago[-N][:POLICY,VALUE[,ROLLOUT]], shipped (the "
              "9x9 net that ships with gozero), models:/NAME@ALIAS, "
              "models:/NAME/VERSION, a model dir or alphazero-N:MODEL (a dual net at N simulations)")


class PlayerError(GozeroError, ValueError):
    """A player spec that names no player we can build."""


@dataclass(frozen=True)
class PlayerSpec:
    """What a spec names, before anything is built or started."""

    text: str
    """The spec as given."""
    kind: str
    """One of `KINDS`."""
    number: int | None = None
    """uct, alphago, a model given as ``alphazero-N:MODEL``: simulations; gnugo: level; None: the default."""
    command: tuple[str, ...] = ()
    """gtp: the engine's argv as given (its program not yet looked up); alphago: (policy, value)
    model specs, or () for the champions; a model given as ``alphazero-N:MODEL``: (MODEL,)."""
    score_utility: float = 0.0
    """A model given as ``alphazero-N,score=W:MODEL``: W, the weight of the score lead in its search's values."""


@dataclass(frozen=True)
class PlayerSettings:
    """How built players play: the game they are in and their search budget."""

    size: int = 9
    """Board size: engines are told it, nets must play it."""
    komi: float = 7.5
    """Komi: engines are told it."""
    sims: int = 100
    """Simulations per move for nets and a bare ``uct``."""
    gtp_timeout: float = 30.0
    """Seconds an external engine gets per command before it loses the game."""
    sample_opening: bool = False
    """Nets sample their opening moves by visit count; False (matches, GTP) plays the most visited
    move from the start: matches get their variety from a random opening played with both colours
    (`MatchConfig.opening`) and seeded engines, not from weaker moves (sampling the first moves at
    tau = 1 made 84 % of a net's opening moves other than its best)."""
    resign_threshold: float | None = None
    """Nets resign below this root value (two own moves in a row); None plays every game out, as
    matches do: a young net's values are too unreliable to lose games on (it resigned 17 of 20
    games it was losing on paper against the random player)."""
    device: str = "auto"
    """Where nets run (`gocore.nn.device.choose_device`): auto suits one process (GTP, `gozero
    play`); matches in pool workers get `MatchSettings.device`, cpu unless asked."""


@dataclass
class Player:
    """One side of a game: its label, what kind of player it is, and a maker of a fresh agent per
    game (seeded); an external engine is shared by the side's games and closed with `close`."""

    label: str
    kind: str
    make: Callable[[int], Agent]
    engine: GtpAgent | None = None
    board_size: int | None = None  # a net plays only its own size; None: any

    @property
    def display(self) -> str:
        """The label, with the kind of player when the label does not say it: what match
        summaries and SGF player names show (``models:/gozero-9x9/3 (alphazero-100)``)."""
        plain = self.label == self.kind or self.kind in ("random", "gtp") or self.label.startswith(f"{self.kind}:")
        return self.label if plain else f"{self.label} ({self.kind})"

    def close(self) -> None:
        """Stop the external engine, if any."""
        if self.engine is not None:
            self.engine.close()


def parse_player(spec: str) -> PlayerSpec:
    """The `PlayerSpec` a spec names; PlayerError if it names none."""
    name, _, arg = spec.partition("-")
    if spec == "random":
        return PlayerSpec(spec, "random")
    if name in ("uct", "gnugo") and (not arg or arg.isdigit()):
        if name == "gnugo" and arg and not 0 <= int(arg) <= 10:
            raise PlayerError(f"{spec}: GNU Go's levels are 0 to 10")
        return PlayerSpec(spec, name, int(arg) if arg else None)
    if name == "alphago" or spec.partition(":")[0] == "alphago":
        return _parse_alphago(spec)
    if spec.partition(":")[0].partition("-")[0] == "alphazero":
        return _parse_alphazero(spec)
    if spec.startswith("gtp:"):
        command = tuple(shlex.split(spec.removeprefix("gtp:")))
        if not command:
            raise PlayerError("gtp: needs an engine command, e.g. 'gtp:gnugo --mode gtp --level 1'")
        return PlayerSpec(spec, "gtp", command=command)
    if spec.startswith("models:/") or "://" in spec or Path(spec).is_dir():
        return PlayerSpec(spec, "model")
    raise PlayerError(f"unknown player {spec!r}: use {SPECS_HELP}")


def _parse_alphago(spec: str) -> PlayerSpec:
    head, colon, models = spec.partition(":")
    sims = head.removeprefix("alphago").removeprefix("-")
    parts = tuple(part.strip() for part in models.split(",")) if colon else ()
    if (head != "alphago" and not sims.isdigit()) or (colon and (len(parts) not in (2, 3) or not all(parts))):
        raise PlayerError(f"unknown player {spec!r}: AlphaGo is alphago[-SIMS][:POLICY,VALUE[,ROLLOUT]], "
                          "e.g. alphago-100:models:/gozero-9x9-policy/2,models:/gozero-9x9-value/1")
    return PlayerSpec(spec, "alphago", int(sims) if sims else None, parts)


def _parse_alphazero(spec: str) -> PlayerSpec:
    head, _, model = spec.partition(":")
    sims, *options = head.removeprefix("alphazero-").split(",")
    weight = options[0].removeprefix("score=") if len(options) == 1 and options[0].startswith("score=") else None
    try:
        score_utility = float(weight) if weight is not None else 0.0 if not options else None
    except ValueError:
        score_utility = None
    if not sims.isdigit() or int(sims) < 1 or not model or score_utility is None or not 0 <= score_utility <= 1:
        raise PlayerError(f"unknown player {spec!r}: a net at its own simulations is alphazero-N[,score=W]:MODEL "
                          "(W in [0, 1]), e.g. alphazero-256:models:/gozero-9x9/6")
    if (inner := parse_player(model)).kind != "model" or inner.command:
        raise PlayerError(f"{spec}: {model!r} is not a model (models:/NAME@ALIAS, models:/NAME/VERSION, a model dir)")
    return PlayerSpec(spec, "model", int(sims), (model,), score_utility)


def alphago_models(parsed: PlayerSpec, size: int, data: Path | None = None) -> tuple[str, ...]:
    """(policy, value[, rollout]) model specs of an alphago player: its own (two: uniform random
    rollouts), else the size's champions, with the rollout policy's if one is registered."""
    from tasks.app.models import default_model_uri, registered_champion

    if parsed.command:
        return tuple(parsed.command)
    rollout = registered_champion(size, "rollout", data)
    return (default_model_uri(size, "policy"), default_model_uri(size, "value"), *([rollout] if rollout else []))


def gnugo_level(parsed: PlayerSpec) -> int:
    """The GNU Go level a gnugo spec plays at: its number (level 0 is a level), else the default."""
    return DEFAULT_GNUGO_LEVEL if parsed.number is None else parsed.number


def ladder_name(spec: str, sims: int, data: Path | None = None, size: int = 9) -> str:
    """The player's name on the Elo ladder, which must mean the same player for good: a registered
    model as ``NAME/VERSION`` (an alias resolved now, since it moves later), ``random``,
    ``uct-<sims>`` (a bare uct searches `sims`), ``gnugo-<level>``, a model directory as
    ``dir:<its name>``; a gtp: spec or another artifact URI is its own name."""
    parsed = parse_player(spec)
    if parsed.kind == "alphago":
        nets = ",".join(ladder_name(model, sims, data) for model in alphago_models(parsed, size, data))
        return f"alphago-{parsed.number or sims}:{nets}"
    if parsed.kind == "model" and parsed.command:  # its own simulations: another player than the net at `sims`
        score = f",score={parsed.score_utility:g}" if parsed.score_utility else ""
        return f"alphazero-{parsed.number}{score}:{ladder_name(parsed.command[0], sims, data, size)}"
    if parsed.kind == "uct":
        return f"uct-{parsed.number or sims}"
    if parsed.kind == "gnugo":
        return f"gnugo-{gnugo_level(parsed)}"
    if parsed.kind == "model" and spec.startswith("models:/"):
        from storage import registry

        try:
            name, selector = registry.parse_model_uri(spec)
            if selector.isdigit():  # pinned: its own name for good (building the player checks it exists)
                return f"{name}/{int(selector)}"
            info = registry.describe(name, selector, data=data)
        except registry.RegistryError as error:
            raise PlayerError(str(error)) from error
        return f"{info.name}/{info.version}"
    if parsed.kind == "model" and "://" not in spec:
        return f"dir:{Path(spec).resolve().name}"
    return spec


def ladder_spec(name: str) -> str | None:
    """A spec that plays the ladder player `name` again (``gozero-9x9/3`` -> ``models:/gozero-9x9/3``);
    None for a model directory, of which the ladder keeps only the name."""
    if name.startswith("alphazero-") and ":" in name:
        head, _, net = name.partition(":")
        model = ladder_spec(net)
        return None if model is None else f"{head}:{model}"
    if name.startswith("alphago-") and ":" in name:
        head, _, nets = name.partition(":")
        models = [ladder_spec(net) for net in nets.split(",")]
        return None if None in models else f"{head}:{','.join(m for m in models if m)}"
    if name.startswith("dir:"):
        return None
    return f"models:/{name}" if _REGISTERED.fullmatch(name) else name


def has_net(specs: Iterable[str]) -> bool:
    """True if any of `specs` names a net (then torch runs, and its threads are worth choosing)."""
    return any(parse_player(spec).kind in ("model", "alphago") for spec in specs)


def build_player(spec: str, settings: PlayerSettings, data: Path | None = None) -> Player:
    """The player `spec` names, ready to play; `data` is the data dir of the model registry."""
    from gocore.play.gtp_client import GNUGO_TROMP_TAYLOR, gnugo_command
    from gocore.search.agents import RandomAgent, UCTAgent

    parsed = parse_player(spec)
    if parsed.kind == "random":
        return Player(spec, "random", lambda seed: RandomAgent(seed=seed))
    if parsed.kind == "uct":
        sims = parsed.number or settings.sims
        return Player(spec, f"uct-{sims}", lambda seed: UCTAgent(sims=sims, seed=seed))
    if parsed.kind == "gnugo":
        command = gnugo_command(gnugo_level(parsed), settings.size, settings.komi)
        return _engine_player(spec, [*command, *GNUGO_TROMP_TAYLOR], settings)
    if parsed.kind == "gtp":
        return _engine_player(spec, engine_command(parsed.command), settings)
    if parsed.kind == "alphago":
        return _alphago_player(parsed, settings, data)
    if parsed.command:  # alphazero-N:MODEL
        from dataclasses import replace

        player = _model_player(parsed.command[0], replace(settings, sims=parsed.number), data, parsed.score_utility)
        if not player.kind.startswith("alphazero"):
            player.close()
            raise PlayerError(f"{spec}: {parsed.command[0]} is a {player.kind} net; only a dual net searches")
        player.label = spec
        return player
    return _model_player(spec, settings, data)


def engine_command(argv: tuple[str, ...] | list[str]) -> list[str]:
    """A GTP engine's argv with its program found (``gnugo`` also at /usr/games/gnugo)."""
    from gocore.play.gtp_client import GNUGO_FALLBACK

    program = shutil.which(argv[0])
    if program is None and argv[0] == "gnugo" and Path(GNUGO_FALLBACK).exists():
        program = GNUGO_FALLBACK
    if program is None:
        raise PlayerError(f"GTP engine {argv[0]!r} not found (give a path or put it on PATH)")
    return [program, *argv[1:]]


def has_gnugo() -> bool:
    """True if GNU Go can be started here (on PATH or at /usr/games/gnugo)."""
    try:
        engine_command(("gnugo",))
    except PlayerError:
        return False
    return True


def _engine_player(spec: str, command: list[str], settings: PlayerSettings) -> Player:
    from gocore.play.match import GtpAgent

    engine = GtpAgent(command, name=spec, timeout=settings.gtp_timeout)
    return Player(spec, "gtp", engine.reseeded, engine)  # one process, a seed per game


def _net(spec: str, settings: PlayerSettings, data: Path | None):
    """The net `spec` names, checked to play the settings' board size."""
    try:
        net = load_model(spec, data).net
    except ModelError as error:
        raise PlayerError(str(error)) from error
    size = net.config.board_size
    if size != settings.size:
        raise PlayerError(f"{spec} plays {size}x{size}, not {settings.size}x{settings.size}")
    return net


def _model_player(spec: str, settings: PlayerSettings, data: Path | None, score_utility: float = 0.0) -> Player:
    """A net as the player it is: PUCT search over a dual net (its values mixed with its score lead
    when `score_utility` > 0), the policy's best move, the value net's best move one ply deep."""
    from gocore.nn.inference import NetEvaluator
    from gocore.search import mcts
    from gocore.search.agents import AlphaZeroAgent, PolicyAgent, ValueGreedyAgent
    from gocore.search.score_utility import ScoreUtilityEvaluator

    net = _net(spec, settings, data)
    size, family = net.config.board_size, net.config.family
    evaluator = NetEvaluator(net, device=settings.device, conv_path=conv_path_for(net, data, settings.device))
    if score_utility and family == "dual":
        try:
            evaluator = ScoreUtilityEvaluator(evaluator, score_utility, scale=size)
        except ValueError as error:
            raise PlayerError(f"{spec}: {error}") from error
    sampled = size * size // 12 if settings.sample_opening else 0  # as search samples its opening
    if family in ("policy", "rl"):
        return Player(spec, family, lambda seed: PolicyAgent(evaluator, greedy=True, seed=seed, sampled_moves=sampled),
                      board_size=size)
    if family == "value":
        return Player(spec, "value-greedy", lambda seed: ValueGreedyAgent(evaluator, seed=seed, sampled_moves=sampled),
                      board_size=size)
    if family != "dual":
        raise PlayerError(f"{spec} is a {family} net, which cannot choose moves by itself")
    # MATCH: no noise, tau -> 0, one leaf a round.
    config = mcts.MATCH.replace(sims=settings.sims, resign_threshold=settings.resign_threshold)
    if settings.sample_opening:
        config = config.replace(temperature_moves=None)  # the default: about N*N/12 sampled moves
    return Player(spec, f"alphazero-{settings.sims}", lambda seed: AlphaZeroAgent(evaluator, config, seed=seed),
                  board_size=size)


def _alphago_player(parsed: PlayerSpec, settings: PlayerSettings, data: Path | None) -> Player:
    """AlphaGo's search over a policy net's priors and a value net mixed with rollouts."""
    from gocore.nn.inference import NetEvaluator
    from gocore.search import mcts
    from gocore.search.agents import AlphaGoAgent
    from tasks.app.models import load_rollout_policy

    policy_spec, value_spec, *rollout_spec = alphago_models(parsed, settings.size, data)
    policy, value = _net(policy_spec, settings, data), _net(value_spec, settings, data)
    try:
        rollouts = load_rollout_policy(rollout_spec[0], settings.size, data) if rollout_spec else None
    except ModelError as error:
        raise PlayerError(f"{parsed.text}: {error}") from error
    if policy.config.family not in ("policy", "rl") or value.config.family != "value":
        raise PlayerError(f"{parsed.text}: AlphaGo needs a policy net and a value net, not "
                          f"{policy.config.family} and {value.config.family}")
    sims = parsed.number or settings.sims
    config = mcts.ALPHAGO.replace(sims=sims, resign_threshold=settings.resign_threshold,
                                  temperature_moves=None if settings.sample_opening else 0)
    evaluator = NetEvaluator(policy_net=policy, value_net=value, device=settings.device,
                             conv_path=conv_path_for(policy, data, settings.device))
    return Player(parsed.text, f"alphago-{sims}",
                  lambda seed: AlphaGoAgent(evaluator, config, seed=seed, rollout_policy=rollouts),
                  board_size=settings.size)
