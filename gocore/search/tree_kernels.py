"""numba kernels for the per-node math of a descent: a node's children vectors (N, W, P, log P,
illegal: `tree.Node`) in, one move out, in a single call; and the expansion of a batch of leaves.

In numpy each step of a descent was a dozen calls on ~362-element vectors at 19x19 (Gumbel's
non-root choice about 26 µs a node, nearly all per-call overhead); here it is one call of a few
µs. The kernels repeat numpy's arithmetic operation for operation, in the same dtypes (priors
stay float32 where the evaluator gave float32) and with its pairwise summation (`pairwise_sum`),
so `puct_choice` and `expand_rows` equal the numpy expressions bit for bit. Gumbel's kernels
differ in the last bits in two places: the prior-weighted Q of the visited children is a pairwise
sum of products where numpy's ``@`` calls BLAS (whose order depends on the CPU), and `exp` is
libm's where numpy has its own SIMD one. tests/gocore/search/test_tree_kernels.py pins every kernel
to the numpy formulas (`benchmarks.baselines.feed_today`, `gumbel.completed_q`, `sigma`) on random nodes,
and whole self-play games to today's.
"""

from __future__ import annotations

import numpy as np
from numba import njit

_BLOCK = 128  # numpy's PW_BLOCKSIZE


@njit(cache=True)
def _block_sum(values, start, count):
    """numpy's pairwise sum of at most 128 values: 8 accumulators, then the rest one by one."""
    if count < 8:
        total = -(values[start] - values[start]) if count > 0 else values[:0].sum()  # -0.0, as numpy
        for i in range(count):
            total += values[start + i]
        return total
    r0, r1, r2, r3 = values[start], values[start + 1], values[start + 2], values[start + 3]
    r4, r5, r6, r7 = values[start + 4], values[start + 5], values[start + 6], values[start + 7]
    i = 8
    while i < count - count % 8:
        at = start + i
        r0 += values[at]
        r1 += values[at + 1]
        r2 += values[at + 2]
        r3 += values[at + 3]
        r4 += values[at + 4]
        r5 += values[at + 5]
        r6 += values[at + 6]
        r7 += values[at + 7]
        i += 8
    total = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < count:
        total += values[start + i]
        i += 1
    return total


@njit(cache=True, inline="always")
def _left_half(count):
    half = count // 2
    return half - half % 8


@njit(cache=True)
def pairwise_sum(values, start, count):
    """Sum of values[start:start+count] in numpy's order (`numpy.add.reduce` on a contiguous
    vector: blocks of up to 128 summed by `_block_sum`, longer runs split in halves and the halves'
    sums added), so the result is numpy's to the bit, in the values' own dtype. numpy recurses; a
    cached numba kernel must not (it crashes when loaded from the cache), so the halves are walked
    with a stack."""
    if count <= _BLOCK:
        return _block_sum(values, start, count)
    starts, counts = np.empty(64, np.int64), np.empty(64, np.int64)  # frames: halves being summed
    left_sums = np.empty(64, values.dtype)  # left_sums[d]: frame d's left half's sum, once known
    is_right = np.zeros(64, np.bool_)
    depth, starts[0], counts[0] = 0, start, count
    while True:
        while counts[depth] > _BLOCK:  # down the left halves
            starts[depth + 1], counts[depth + 1] = starts[depth], _left_half(counts[depth])
            is_right[depth + 1] = False
            depth += 1
        total = _block_sum(values, starts[depth], counts[depth])
        while depth > 0 and is_right[depth]:  # a right half done: its frame's sum is done too
            depth -= 1
            total = left_sums[depth] + total
        if depth == 0:
            return total
        left_sums[depth - 1] = total  # a left half done: its right sibling next
        half = _left_half(counts[depth - 1])
        starts[depth], counts[depth] = starts[depth - 1] + half, counts[depth - 1] - half
        is_right[depth] = True


@njit(cache=True)
def puct_choice(child_N, child_W, child_P, illegal, c_puct, visits):
    """argmax of W / max(N, 1) + scale * P / (1 + N) + illegal, scale = c_puct * sqrt(max(visits - 1,
    1)) (`Node.best_move`; the max: on a fresh node U would be 0 everywhere and the corner would win
    the tie); scale * P in P's dtype, as numpy multiplies a float32 P by a Python float. The same
    argmax with less work: illegal moves (a third of a 19x19 board or more) are skipped, and an
    unvisited child's divisions (by 1.0) left out."""
    scale = child_P.dtype.type(c_puct * np.sqrt(max(visits - 1.0, 1.0)))
    best, best_score = 0, -np.inf
    for m in range(child_N.shape[0]):
        if illegal[m] != 0 and m > 0:  # -inf: its score never beats move 0's (the first kept)
            continue
        if child_N[m] == 0:  # most children: both divisions are by 1.0, which changes no bit
            score = (child_W[m] + np.float64(scale * child_P[m])) + illegal[m]
        else:
            score = (child_W[m] / max(child_N[m], 1.0) + (scale * child_P[m]) / (1.0 + child_N[m])) + illegal[m]
        if score > best_score or (m == 0):
            best, best_score = m, score
    return best


@njit(cache=True)
def gumbel_sigma(child_N, child_W, prior, illegal, value, c_visit, c_scale, out):
    """out ← sigma(completed Q) (`gumbel.sigma(gumbel.completed_q(node), node, config)`); returns
    sum N. Completed Q: Q of visited children, v_mix for the others (mover's view)."""
    count = child_N.shape[0]
    visited_P = np.empty(count, prior.dtype)
    weighted = np.empty(count)
    n_visited = 0
    for m in range(count):
        if child_N[m] > 0:
            q = child_W[m] / child_N[m]
            out[m] = q
            visited_P[n_visited] = prior[m]
            weighted[n_visited] = np.float64(prior[m]) * q
            n_visited += 1
    total = pairwise_sum(child_N, 0, count)
    prior_visited = pairwise_sum(visited_P, 0, n_visited)
    v_mix = value
    if total > 0 and prior_visited > 0:
        v_mix = (value + total * pairwise_sum(weighted, 0, n_visited) / prior_visited) / (1 + total)
    low, high, most = np.inf, -np.inf, child_N[0]
    for m in range(count):
        if child_N[m] <= 0:
            out[m] = v_mix
        if illegal[m] == 0:
            low, high = min(low, out[m]), max(high, out[m])
        most = max(most, child_N[m])
    spread, factor = max(high - low, 1e-8), (c_visit + most) * c_scale
    for m in range(count):
        out[m] = factor * ((out[m] - low) / spread)
    return total


@njit(cache=True)
def gumbel_choice(child_N, child_W, prior, log_prior, illegal, value, c_visit, c_scale):
    """The Gumbel paper's non-root move: argmax of pi' - N / (1 + sum N) + illegal, pi' =
    softmax(log P + sigma(completed Q)) (`gumbel.improved_policy`)."""
    count = child_N.shape[0]
    scores = np.empty(count)
    total = gumbel_sigma(child_N, child_W, prior, illegal, value, c_visit, c_scale, scores)
    top = -np.inf
    for m in range(count):
        scores[m] = log_prior[m] + scores[m]
        top = max(top, scores[m])
    for m in range(count):  # exp(-inf) is 0: illegal moves (a third of a 19x19 board or more) skip it
        scores[m] = np.exp(scores[m] - top) if illegal[m] == 0 else 0.0
    weights = pairwise_sum(scores, 0, count)
    best, best_score = 0, -np.inf
    for m in range(count):
        score = (scores[m] / weights - child_N[m] / (1.0 + total)) + illegal[m]
        if score > best_score or m == 0:
            best, best_score = m, score
    return best


@njit(cache=True)
def expand_rows(legal, priors, kept, illegal, is_vanished):
    """For each row b (a leaf): kept[b] ← priors[b] renormalised over legal[b], in the priors' dtype;
    illegal[b] ← 0 on legal moves, -inf elsewhere; is_vanished[b] ← no prior mass on the legal
    moves (kept[b] then unset: `Node.expand` makes it uniform). numpy's `Node.expand`, bit for bit."""
    for b in range(legal.shape[0]):
        for m in range(legal.shape[1]):
            kept[b, m] = priors[b, m] if legal[b, m] else 0
            illegal[b, m] = 0.0 if legal[b, m] else -np.inf
        total = pairwise_sum(kept[b], 0, legal.shape[1])
        is_vanished[b] = not total > 0
        if total > 0:
            for m in range(legal.shape[1]):
                kept[b, m] = kept[b, m] / total
