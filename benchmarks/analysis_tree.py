"""`gozero analysis`'s search tree: memory per root visit and what recording the aux heads costs.

    python -m benchmarks.analysis_tree [--sizes 9,19] [--visits 3000] [--preset tiny]

For each board size: a random `--preset` net with the aux heads searches the empty board for
`--visits` visits as `gozero analysis` does (`HeadRecorder`, ownership kept) and tracemalloc
reports the bytes held per visit as searched (one random net's tree; `benchmarks.tree_memory`
measures the bound that `gtp_analysis.TREE_BYTES_*` and ``--tree-memory``'s visit cap come from);
then the same search without recording (``evaluate`` only), and the time to read the tree's
averages the first time and again after 64 more visits (what a partial answer costs).
One thread; compare figures within one run.
"""

from __future__ import annotations

import argparse
import time


def parse_args() -> argparse.Namespace:
    """The command line; parsed before anything heavy, so that --help answers at once."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="9,19", help="board sizes, comma separated")
    parser.add_argument("--visits", type=int, default=3000, help="root visits per search")
    parser.add_argument("--preset", default="tiny", help="net preset")
    return parser.parse_args()


def main() -> None:
    args = parse_args()
    import tracemalloc

    import torch

    from gocore.nn.inference import NetEvaluator
    from gocore.nn.nets import build_net, preset
    from gocore.play.gtp_analysis import visits_for_memory
    from gocore.rules.board import Position
    from gocore.search import mcts
    from gocore.search.analysis import analyse
    from gocore.search.tree_averages import HeadRecorder, TreeAverages

    torch.set_num_threads(1)
    for size in (int(text) for text in args.sizes.split(",")):
        evaluator = NetEvaluator(build_net(preset(args.preset, size, 17, encoder="agz17", aux_heads=True)))
        config = mcts.MATCH.replace(sims=args.visits)
        evaluator.evaluate([Position.initial(size)])  # warm up torch and the kernels outside the figures
        plain_seconds, _ = timed_search(evaluator, config, size)
        recorded_seconds, _ = timed_search(HeadRecorder(evaluator, keep_ownership=True), config, size)
        tracemalloc.start()  # a third search for the memory: tracemalloc slows what it traces
        recorder = HeadRecorder(evaluator, keep_ownership=True)
        _, search = timed_search(recorder, config, size)
        held = tracemalloc.get_traced_memory()[0]
        tracemalloc.stop()
        averages = TreeAverages(recorder)
        started = time.perf_counter()
        analyse(search.roots[0], recorder, averages=averages)
        first_read = time.perf_counter() - started
        search.search(sims=64)
        started = time.perf_counter()
        analyse(search.roots[0], recorder, averages=averages)
        read_again = time.perf_counter() - started
        print(f"{size}x{size} {args.preset}, {args.visits} visits: {held / args.visits / 1000:.1f} KB held per visit "
              f"(1000 MB: {visits_for_memory(1000, size):,} visits); search {plain_seconds:.1f} s plain, "
              f"{recorded_seconds:.1f} s recording the heads ({recorded_seconds / plain_seconds:.2f}x); "
              f"averages read {1000 * first_read:.0f} ms, again after 64 more visits {1000 * read_again:.0f} ms")


def timed_search(evaluator, config, size: int):  # noqa: ANN001, ANN201 - an evaluator, an MCTSConfig
    """(seconds, the search) of one search of the empty board."""
    from gocore.rules.board import Position
    from gocore.search import mcts

    search = mcts.BatchedSearch(evaluator, config, [Position.initial(size)], seed=0)
    started = time.perf_counter()
    search.search()
    return time.perf_counter() - started, search


if __name__ == "__main__":
    main()
