"""The CPU side of self-play: how many simulations a core feeds a net, and how many cores a GPU needs.

    python -m benchmarks.feed [--sizes 9 19] [--games 50] [--sims 32] [--moves 3] [--searches gumbel puct]

1. Self-play search with a *free net*: an evaluator that runs `NetEvaluator`'s whole CPU side
   (encode, legal masks, slicing, masked softmax) but answers its forward pass with zeros at no
   cost, so only the search, the encode and the masks are timed. `games` games in lockstep (a
   self-play task's default, 50), `leaves_per_game` 8, the loop's SELFPLAY settings with `sims`
   simulations, each game starting from a different point of a random legal game (move 0 to
   N*N/2) and searching `moves` moves as `selfplay.play_games` does. Two paths in the same run:
   today's per-position path (`features.encode_positions`, `Position.legal_moves` per leaf in
   the evaluator and again in `board.candidate_moves` per leaf, and the tree code as it was before
   issue #28's kernels, `benchmarks.baselines.feed_today`: numpy per node, Gumbel's log priors recomputed at
   every step) against the batch path (`position_planes.encode_batch`; a new leaf played with its
   board and masks in one kernel, `Position.play_leaf`, which `board.legal_masks` /
   `candidate_masks` then find on it; the per-node math in numba, `search.tree_kernels`, leaves
   expanded a batch at a time); both play the same moves from the same seed, which the benchmark
   checks. Rates are simulations per CPU-second (= per core; the machine is shared), the best of
   `rounds` alternating rounds of each path, with a split of the CPU time: tree work, encode,
   masks, other (softmax, slicing); on the batch path the leaves' masks are tree work (they are
   computed as the leaf is played), what is left under masks is gathering them for the batch.
2. The nets' own forward pass on this CPU (`tiny`, `small`; one thread, batches of
   `NetEvaluator`'s CPU slice, 64), positions per CPU-second.
3. A projection, not a measurement: positions/s an H100 would serve (the net's FLOPs a position,
   counted by torch's FlopCounterMode on the net definitions, at 989 TFLOP/s bf16 dense and 30-40 %
   utilisation), and the cores of the batch path needed to keep it busy.

The last line is ``feed: speedup_19x19=<new/old> sims_per_core_19x19=<new>``.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Sequence


def parse_args() -> argparse.Namespace:
    """The command line; parsed before the imports below, so that --help answers at once."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[9, 19])
    parser.add_argument("--games", type=int, default=50, help="games searched in lockstep (a task's default)")
    parser.add_argument("--sims", type=int, default=32, help="simulations per move (the zero-9x9 loop's)")
    parser.add_argument("--moves", type=int, default=3, help="moves searched per game, per path")
    parser.add_argument("--searches", nargs="+", default=["gumbel", "puct"], help="root searches (gumbel: the loop's)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of both paths, alternating; best of each kept")
    parser.add_argument("--seed", type=int, default=0)
    return parser.parse_args()


# ruff: noqa: E402 - the imports below come after the early parse on purpose
if __name__ == "__main__":
    parse_args()  # --help and usage errors end here, before torch and gocore load

import numpy as np
import torch
from torch.utils.flop_counter import FlopCounterMode

from benchmarks.baselines.feed_today import todays_tree
from gocore.nn import features, position_planes
from gocore.nn.inference import CPU_MAX_BATCH, NetEvaluator, legal_mask
from gocore.nn.nets import build_net, preset
from gocore.rules.board import Position, candidate_masks, candidate_moves
from gocore.search.gumbel import root_search, search_factory
from gocore.search.mcts import SELFPLAY, BatchedSearch, MCTSConfig

ENCODER = "agz17"
H100_BF16 = 989e12  # dense bf16 FLOP/s (the spec sheet's figure without sparsity)
UTILISATION = (0.30, 0.40)
NETS = ("tiny", "small", "full", "b20c256")


class Clock:
    """CPU seconds spent per part, summed over calls."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    def timed(self, part: str, fn: Callable, *args):
        started = time.process_time()
        try:
            return fn(*args)
        finally:
            self.seconds[part] = self.seconds.get(part, 0.0) + time.process_time() - started


class FreeNet(NetEvaluator):
    """NetEvaluator's CPU side, batch path, with a forward pass that costs nothing: uniform priors
    over the legal moves, value 0."""

    def __init__(self, net: torch.nn.Module, clock: Clock):
        super().__init__(net, device="cpu")
        self.clock = clock

    def evaluate(self, positions: Sequence[Position]) -> tuple[np.ndarray, np.ndarray]:
        return self.clock.timed("evaluator", super().evaluate, positions)

    def _inputs(self, positions: Sequence[Position]) -> tuple[np.ndarray, np.ndarray]:
        return (self.clock.timed("encode", position_planes.encode_batch, positions, self.encoder),
                self.clock.timed("masks", legal_mask, positions))

    def _forward(self, planes: np.ndarray, aux: bool = False):
        return np.zeros((len(planes), self.size ** 2 + 1), np.float32), np.zeros(len(planes), np.float32), None, None


class FreeNetBaseline(FreeNet):
    """The same, on today's per-position path: `features.encode_positions`, `legal_moves` per position."""

    def _inputs(self, positions: Sequence[Position]) -> tuple[np.ndarray, np.ndarray]:
        return (self.clock.timed("encode", features.encode_positions, positions, self.encoder),
                self.clock.timed("masks", lambda: np.stack([p.legal_moves() for p in positions])))


def timed_search(new_search: Callable[..., BatchedSearch], clock: Clock, is_baseline: bool) -> Callable[..., BatchedSearch]:
    """`new_search` whose leaf candidates are timed: the batch path, or per position (baseline)."""

    def build(*args, **kwargs) -> BatchedSearch:
        search = new_search(*args, **kwargs)
        config = search.config

        def candidates(positions: Sequence[Position]) -> np.ndarray:
            if is_baseline:
                return np.stack([candidate_moves(p, config.sensible_moves, config.pass_when_settled) for p in positions])
            return candidate_masks(positions, config.sensible_moves, config.pass_when_settled)

        search._candidates = lambda positions: clock.timed("candidates", candidates, positions)  # type: ignore[method-assign]
        return search

    return build


def random_starts(size: int, games: int, rng: np.random.Generator) -> list[Position]:
    """`games` positions of random legal games (no passes unless forced), from move 0 to N*N/2."""
    starts = []
    for target in np.linspace(0, size * size // 2, games).astype(int):
        position = Position.initial(size)
        while position.move_number < target:
            legal = np.flatnonzero(position.legal_moves()[:-1])
            position = position.play(int(rng.choice(legal)) if len(legal) else size * size)
        starts.append(position)
    return starts


def selfplay_run(starts: list[Position], config: MCTSConfig, search: str, moves: int, seed: int,
                 is_baseline: bool) -> dict:
    """Search `moves` moves of every game in lockstep as `selfplay.play_games` does; CPU seconds, parts, moves."""
    clock = Clock()
    torch.manual_seed(0)
    net = build_net(preset("tiny", starts[0].size, features.get_encoder(ENCODER).num_planes, encoder=ENCODER))
    evaluator = (FreeNetBaseline if is_baseline else FreeNet)(net, clock)
    tree = timed_search(search_factory(root_search(search)), clock, is_baseline)(evaluator, config, starts, seed=seed)
    played: list[list[int]] = [[] for _ in starts]
    active = [g for g, root in enumerate(tree.roots) if root.terminal_value is None]
    with todays_tree(is_baseline):
        started = time.process_time()
        for _ in range(moves):
            for g, result in zip(active, tree.search(active)):
                played[g].append(result.move)
                tree.advance(g, result.move)
            active = [g for g in active if tree.roots[g].terminal_value is None]
        cpu = time.process_time() - started
    sims = sum(len(m) for m in played) * config.sims
    return {"cpu": cpu, "sims": sims, "parts": clock.seconds, "moves": played}


def split(run: dict) -> dict[str, float]:
    """Shares of a run's CPU time: tree work (selection, expansion, backup, moves played; on the batch
    path also the new leaves' masks, `Position.play_leaf`), encode, masks (the evaluator's legal
    moves and the search's candidates), other (softmax, slicing)."""
    parts = run["parts"]
    seconds = {"tree": run["cpu"] - parts["evaluator"] - parts["candidates"], "encode": parts["encode"],
               "masks": parts["masks"] + parts["candidates"],
               "other": parts["evaluator"] - parts["encode"] - parts["masks"]}
    return {name: value / run["cpu"] for name, value in seconds.items()}


def forward_rate(name: str, size: int, batch: int = CPU_MAX_BATCH, budget: float = 4.0) -> float:
    """Positions per CPU-second of the bare forward pass of an untrained `name` net, one thread."""
    torch.manual_seed(0)
    net = build_net(preset(name, size, features.get_encoder(ENCODER).num_planes, encoder=ENCODER)).eval()
    planes = torch.randint(0, 2, (batch, features.get_encoder(ENCODER).num_planes, size, size)).float()
    count, started = 0, time.process_time()
    with torch.inference_mode():
        net(planes)  # warm-up
        started = time.process_time()
        while time.process_time() - started < budget or count == 0:
            net(planes)
            count += batch
    return count / (time.process_time() - started)


def flops_per_position(name: str, size: int) -> float:
    """FLOPs of one position through the net (torch's count: 2 per multiply-add; convs and linears)."""
    net = build_net(preset(name, size, features.get_encoder(ENCODER).num_planes, encoder=ENCODER)).eval()
    planes = torch.zeros(1, features.get_encoder(ENCODER).num_planes, size, size)
    with torch.inference_mode(), FlopCounterMode(display=False) as counter:
        net(planes)
    return float(counter.get_total_flops())


def main() -> None:
    args = parse_args()
    torch.set_num_threads(1)
    config = SELFPLAY.replace(sims=args.sims, resign_threshold=None)
    print(f"self-play with a free net: {args.games} games in lockstep, {args.sims} sims/move, leaves_per_game="
          f"{config.leaves_per_game}, {args.moves} moves a game from random-game positions (move 0..N*N/2); "
          f"simulations per CPU-second (one core), best of {args.rounds} alternating rounds, torch threads 1")
    per_core: dict[int, float] = {}  # the batch path's sims per CPU-second, first search
    speedups: dict[int, float] = {}
    for size in args.sizes:
        starts = random_starts(size, args.games, np.random.default_rng(args.seed))
        for search in args.searches:
            selfplay_run(starts[:2], config.replace(sims=8), search, 1, args.seed, False)  # warm-up, compiles
            runs: dict[bool, list[dict]] = {True: [], False: []}
            for _ in range(args.rounds):  # alternating, so that both paths see the same load
                for is_baseline in (True, False):
                    runs[is_baseline].append(selfplay_run(starts, config, search, args.moves, args.seed, is_baseline))
            old, new = (min(runs[is_baseline], key=lambda run: run["cpu"]) for is_baseline in (True, False))
            old_rate, new_rate = old["sims"] / old["cpu"], new["sims"] / new["cpu"]
            same = "same moves" if old["moves"] == new["moves"] else "MOVES DIFFER"
            print(f"\n{size}x{size} {search}: {new['sims']:,} simulations a path ({same})")
            for label, run, rate in (("per-position (today)", old, old_rate), ("batch path", new, new_rate)):
                shares = ", ".join(f"{name} {100 * share:.0f} %" for name, share in split(run).items())
                print(f"  {label:22s} {rate:8,.0f} sims/CPU-s   [{shares}]")
            print(f"  batch / per-position   {new_rate / old_rate:8.2f}x")
            if search == args.searches[0]:
                per_core[size], speedups[size] = new_rate, new_rate / old_rate
    print("\nthe nets' forward pass on this CPU (positions per CPU-second, one thread, batch "
          f"{CPU_MAX_BATCH}, untrained {ENCODER} dual nets):")
    for size in args.sizes:
        rates = {name: forward_rate(name, size) for name in ("tiny", "small")}
        print(f"  {size}x{size}: " + ", ".join(f"{name} {rate:,.0f}" for name, rate in rates.items())
              + (f"; the batch path's search feeds {per_core[size]:,.0f} sims/CPU-s" if size in per_core else ""))
    size = max(args.sizes)
    print(f"\nPROJECTION (not measured): an H100 at {H100_BF16 / 1e12:.0f} TFLOP/s bf16, "
          f"{'-'.join(f'{100 * u:.0f}' for u in UTILISATION)} % utilisation, {size}x{size}, "
          f"fed by the batch path's {args.searches[0]} search at {per_core[size]:,.0f} sims per core-second "
          f"(today's: {per_core[size] / speedups[size]:,.0f}):")
    for name in NETS:
        flops = flops_per_position(name, size)
        served = [H100_BF16 * u / flops for u in UTILISATION]
        cores = [rate / per_core[size] for rate in served]
        today = [core * speedups[size] for core in cores]
        print(f"  {name:8s} {flops / 1e9:7.2f} GFLOP/position  H100 {served[0]:>11,.0f}-{served[1]:<11,.0f} positions/s"
              f"  cores needed {cores[0]:,.0f}-{cores[1]:,.0f} (today's path: {today[0]:,.0f}-{today[1]:,.0f})")
    if 19 in speedups:
        print(f"feed: speedup_19x19={speedups[19]:.2f} sims_per_core_19x19={per_core[19]:.0f}")


if __name__ == "__main__":
    main()
