"""Search tree memory per root visit, measured beside `gtp_analysis.tree_bytes_per_visit`'s model.

    python -m benchmarks.tree_memory [--sizes 9,19] [--visits 3000] [--preset tiny] [--nets 3]

For each board size and each of `--nets` random `--preset` nets with the auxiliary heads (torch
seeds 0, 1, ...), the net ponders the empty board as ``lz-analyze`` / ``kata-analyze`` does
(`gtp_analysis.stream_analysis` on an `AlphaZeroAgent` with `mcts.MATCH`, chunks of 16
simulations, resting at `--visits` root visits), and tracemalloc reports the bytes held when it
rests, per root visit, two ways:

- as searched. A leaf makes its rules state (17.7 KB at 19x19) and gets its own child_N and
  child_W only when the search comes back to it, so this depends on the tree's shape: a random
  net's near-uniform priors grow a wide, shallow tree in which few nodes are ever revisited (the
  line gives the share of nodes whose state was made; it moves with the net's weights), where a
  trained net's sharper priors grow a deeper one;
- every node expanded: the same tree once every node has made its state and has its own
  child_N and child_W, the most a tree of that many nodes can hold. The model is fitted to this
  bound, so that ``--ponder``'s default and ``--tree-memory`` hold whatever net searches.

Evaluators: "recorded" is `HeadRecorder` keeping ownership, as ``gozero analysis`` searches (the
model's basis); "plain" is the net alone, as ``gozero gtp`` searches. Each figure is the nets'
median (and range); the last line fits base + per point through the bound's medians at the
smallest and largest sizes. One thread; the figures count bytes, not time, so load does not move
them.
"""

from __future__ import annotations

import argparse
import os


def parse_args() -> argparse.Namespace:
    """The command line; parsed before anything heavy, so that --help answers at once."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="9,19", help="board sizes, comma separated")
    parser.add_argument("--visits", type=int, default=3000, help="root visits at which the ponder rests")
    parser.add_argument("--preset", default="tiny", help="net preset (random weights, auxiliary heads)")
    parser.add_argument("--nets", type=int, default=3, help="random nets per size (torch seeds 0, 1, ...)")
    return parser.parse_args()


def held_per_visit(evaluator, size: int, visits: int) -> tuple[float, float, float]:  # noqa: ANN001 - an Evaluator
    """Bytes held per root visit by a GTP ponder of the empty board resting at `visits`: as
    searched, and with every node expanded (its state made, its own child_N and child_W), the
    bound a deeper tree approaches; and the share of nodes whose state the search made."""
    import gc
    import tracemalloc

    from gocore.play.gtp_analysis import AnalysisRequest, stream_analysis
    from gocore.rules.board import Position
    from gocore.search import mcts
    from gocore.search.agents import AlphaZeroAgent

    # MATCH, as tasks.app.players builds the GTP engine's agent; interval 0: no info lines
    agent, position = AlphaZeroAgent(evaluator, mcts.MATCH, seed=0), Position.initial(size)
    request = AnalysisRequest("kata", ownership=True)
    gc.collect()
    tracemalloc.start()
    # has_input(0.0) between chunks: no command yet; has_input(1.0) once resting: the next command
    for _ in stream_analysis(agent, position, request, visits, has_input=lambda seconds: seconds > 0):
        pass
    gc.collect()
    searched = tracemalloc.get_traced_memory()[0]
    root = agent.analyse(position, 0)
    nodes = made = 0
    stack = [root]
    while stack:
        node = stack.pop()
        nodes, made = nodes + 1, made + (node.position._flat is not None)
        if node.child_N is not None:
            node.count_visits()
        node.position._state  # noqa: B018 - made on first ask
        stack.extend(node.children.values())
    del stack, node
    gc.collect()
    expanded = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    return searched / root.visits, expanded / root.visits, made / nodes


def main() -> None:
    args = parse_args()
    os.environ.setdefault("NUMBA_NUM_THREADS", "1")
    import statistics

    import torch

    from gocore.nn.inference import NetEvaluator
    from gocore.nn.nets import build_net, preset
    from gocore.play.gtp_analysis import TREE_BYTES_BASE, TREE_BYTES_PER_POINT, tree_bytes_per_visit
    from gocore.rules.board import Position
    from gocore.search.tree_averages import HeadRecorder

    torch.set_num_threads(1)
    sizes = [int(text) for text in args.sizes.split(",")]
    print(f"model: {TREE_BYTES_BASE:,} B + {TREE_BYTES_PER_POINT} B per point a root visit "
          f"(gtp_analysis.tree_bytes_per_visit); {args.nets} random {args.preset} nets with the aux heads, "
          f"empty board, {args.visits:,} visits")
    fitted: dict[int, float] = {}
    for size in sizes:
        searched, expanded, shares, plain, plain_expanded = [], [], [], [], []
        for seed in range(args.nets):
            torch.manual_seed(seed)
            evaluator = NetEvaluator(build_net(preset(args.preset, size, 17, encoder="agz17", aux_heads=True)))
            evaluator.evaluate([Position.initial(size)])  # torch and the kernels warm, outside the figures
            held_per_visit(evaluator, size, 64)  # and numba's lazily compiled tree kernels
            held, bound, share = held_per_visit(HeadRecorder(evaluator, keep_ownership=True), size, args.visits)
            searched, expanded, shares = [*searched, held], [*expanded, bound], [*shares, share]
            held, bound, _ = held_per_visit(evaluator, size, args.visits)
            plain, plain_expanded = [*plain, held], [*plain_expanded, bound]
        fitted[size], model = statistics.median(expanded), tree_bytes_per_visit(size)
        print(f"{size}x{size}: recorded {_kb(searched)} a visit as searched (states made at "
              f"{100 * min(shares):.0f}-{100 * max(shares):.0f} % of nodes), {_kb(expanded)} every node expanded; "
              f"model {model / 1000:.1f} KB, ratios {statistics.median(searched) / model:.2f} and "
              f"{fitted[size] / model:.2f}; plain (GTP) {_kb(plain)} and {_kb(plain_expanded)}")
    if len(sizes) > 1:
        small, large = min(sizes), max(sizes)
        per_point = (fitted[large] - fitted[small]) / (large * large - small * small)
        base = fitted[small] - per_point * small * small
        print(f"fit through {small}x{small} and {large}x{large}, recorded, every node expanded: "
              f"{base:,.0f} B + {per_point:.0f} B per point")


def _kb(figures: list[float]) -> str:
    """The median of bytes a visit in KB, and the range when there are several."""
    import statistics

    median = f"{statistics.median(figures) / 1000:.1f} KB"
    return median if len(figures) == 1 else f"{median} ({min(figures) / 1000:.1f}-{max(figures) / 1000:.1f})"


if __name__ == "__main__":
    main()
