"""Which convolution path runs a net fastest on this CPU: measured once, then remembered.

torch has several CPU paths for the same convolutions, and which is fastest depends on the CPU:
the `small` dual net, batch 64, one thread, ran 395 positions/s with oneDNN (`mkldnn`, torch's
default) on an AMD EPYC (AVX2), 554 with oneDNN off (`native`) and 520 in `channels_last`, while
an Intel Xeon (AVX-512) gave 2,917 with the default. So `choose_conv_path` times the paths on a
copy of the net at start-up, once per (CPU model, torch version, net shape, threads), and keeps
the answer in a `ChoiceStore`: the data dir's JSON file (`storage.conv_cache`; the tasks layer's
`tasks.app.models.conv_path_for` passes it), or a `MemoryStore` for one process. A `NetEvaluator`
(Go) or `BaghchalNetEvaluator` takes the path it is given (`conv_path`); off the CPU every path is
torch's default.

The float32 paths compute the same function: outputs agree to float32 rounding (not bit for bit, so
a seed replays the same games only on one path, which the cache keeps fixed per machine). The
fourth, `bf16`, is `channels_last` under CPU bf16 autocast: convolutions in bfloat16 (8 bits of
mantissa, float32 accumulation), offered only where the CPU does bf16 natively (AMX or
AVX512-BF16, `bf16_native`). On the Xeon with AMX here the `small` net ran 2.5-3.3x the positions
of float32 (benchmarks/conv_paths.py); its priors and values differ from float32 by about 1e-2,
and whether that costs strength is measured in docs/benchmarks.md. ``GOZERO_CPU_BF16=0`` keeps it
out of the choice (float32 only).
"""

from __future__ import annotations

import contextlib
import copy
import functools
import os
import platform
import time
from collections.abc import Iterator
from typing import Any, Protocol

import torch

CONV_PATHS = ("mkldnn", "native", "channels_last", "bf16")  # torch's default, oneDNN off, NHWC, NHWC in bf16
NHWC_PATHS = ("channels_last", "bf16")
DEFAULT_PATH = "mkldnn"
MEASURE_BATCH = 64  # positions per timed forward pass (`inference.CPU_MAX_BATCH`)
MARGIN = 1.05  # another path is chosen over torch's default only when this much faster
BF16_MIN_BATCH = 2  # smaller batches run `bf16`'s float32 twin, `channels_last`: one position a call (a match's
# search, GTP) ran 689 positions/CPU-s in bf16 against 890 in float32, two 1,363 against 980 (`small` 9x9, AMX)


class ChoiceStore(Protocol):
    """Where choices are kept between start-ups: `get` returns None for an unknown key."""

    def get(self, key: str) -> str | None:
        """The path chosen for `key`, or None."""
        ...

    def put(self, key: str, path: str, rates: dict[str, float]) -> None:
        """Remember `path` (and the measured positions/s of every path) for `key`."""
        ...


class MemoryStore:
    """Choices for this process only."""

    def __init__(self) -> None:
        self.choices: dict[str, str] = {}

    def get(self, key: str) -> str | None:
        return self.choices.get(key)

    def put(self, key: str, path: str, rates: dict[str, float]) -> None:
        self.choices[key] = path


def cpu_model() -> str:
    """The CPU's model name (Linux /proc/cpuinfo), else what `platform` says."""
    try:
        with open("/proc/cpuinfo") as info:
            for line in info:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown cpu"


@functools.cache
def _cpu_does_bf16() -> bool:
    """Does oneDNN run bf16 natively on this CPU (AMX or AVX512-BF16)?"""
    try:
        return bool(torch.backends.mkldnn.is_available() and torch.ops.mkldnn._is_mkldnn_bf16_supported())
    except (AttributeError, RuntimeError):  # a torch build without the query
        return False


def bf16_native() -> bool:
    """May the choice consider `bf16`: the CPU does bf16 natively and ``GOZERO_CPU_BF16`` is not 0."""
    return os.environ.get("GOZERO_CPU_BF16", "1") != "0" and _cpu_does_bf16()


def candidate_paths(bf16: bool = True) -> tuple[str, ...]:
    """The paths a choice measures on this CPU: the float32 ones, and `bf16` where `bf16_native`
    (and the caller allows it: `bf16`)."""
    return CONV_PATHS if bf16 and bf16_native() else tuple(path for path in CONV_PATHS if path != "bf16")


def choice_key(net: torch.nn.Module, bf16: bool = True) -> str:
    """What a choice depends on: CPU model, torch version, net shape (and game, Baghchal's named),
    torch threads and the candidate paths (a choice made among fewer is measured again)."""
    config = net.config
    game = "" if config.game == "go" else f"{config.game} "  # Go's keys as before: caches stay valid
    shape = (f"{game}{config.family} b{config.blocks}c{config.filters}v{config.value_hidden}{' aux' * config.aux_heads} "
             f"{config.board_size}x{config.board_size}x{config.in_planes}")
    return (f"{cpu_model()} | torch {torch.__version__} | {shape} | {torch.get_num_threads()} threads"
            f" | {','.join(candidate_paths(bf16))}")


@contextlib.contextmanager
def conv_context(path: str) -> Iterator[None]:
    """The torch settings of `path` around a forward pass (oneDNN off for `native`, CPU bf16
    autocast for `bf16`). The oneDNN switch is process-wide while it lasts (torch has no per-thread
    one); evaluators of one net shape in one process share a choice (a Baghchal loop with ``cpu_bf16``
    has two, one for self-play and a float32 one for gates, in tasks that do not overlap), so
    concurrent ones agree on it."""
    if path == "bf16":
        with torch.autocast("cpu", dtype=torch.bfloat16):
            yield
        return
    if path != "native":
        yield
        return
    previous = torch.backends.mkldnn.enabled
    torch.backends.mkldnn.enabled = False  # not mkldnn.flags(): it also sets TF32 and warns on every call
    try:
        yield
    finally:
        torch.backends.mkldnn.enabled = previous


def for_batch(path: str, batch: int) -> str:
    """The path a forward pass of `batch` positions takes on a net prepared for `path`: `bf16`
    below `BF16_MIN_BATCH` positions runs in float32 on the same NHWC weights (`channels_last`)."""
    return "channels_last" if path == "bf16" and batch < BF16_MIN_BATCH else path


def prepare_net(net: torch.nn.Module, path: str) -> torch.nn.Module:
    """`net` in the memory layout of `path` (NHWC weights for `channels_last` and `bf16`, NCHW for the
    others), in place: an evaluator built on a net another one left NHWC runs its own path's layout
    (a Baghchal loop with ``cpu_bf16`` self-plays on `bf16` and gates on a float32 path, one cached
    net per process)."""
    if path not in CONV_PATHS:
        raise ValueError(f"unknown conv path {path!r}; one of {CONV_PATHS}")
    return net.to(memory_format=torch.channels_last if path in NHWC_PATHS else torch.contiguous_format)


def prepare_input(planes: torch.Tensor, path: str) -> torch.Tensor:
    """(B, C, N, N) planes in the memory layout of `path`."""
    return planes.contiguous(memory_format=torch.channels_last) if path in NHWC_PATHS else planes


@torch.inference_mode()
def measure_paths(net: torch.nn.Module, batch: int = MEASURE_BATCH, rounds: int = 4,
                  paths: tuple[str, ...] | None = None) -> dict[str, float]:
    """Positions/s of a forward pass of `net` (a copy per path, on the CPU) on each of `paths`
    (default `candidate_paths`): the best of `rounds` rounds after a warm-up one, the paths' order
    rotating so that none always runs first (other processes on the cores move single timings by
    tens of percent)."""
    config, paths = net.config, paths or candidate_paths()
    planes = (torch.rand(batch, config.in_planes, config.board_size, config.board_size) < 0.3).float()
    models = {path: prepare_net(copy.deepcopy(net).cpu().eval(), path) for path in paths}
    inputs = {path: prepare_input(planes, path) for path in paths}
    best = dict.fromkeys(paths, float("inf"))
    for index in range(rounds + 1):
        shift = index % len(paths)
        for path in paths[shift:] + paths[:shift]:
            with conv_context(path):
                started = time.perf_counter()
                models[path](inputs[path])
                if index:  # round 0 is the warm-up (allocations, oneDNN primitives)
                    best[path] = min(best[path], time.perf_counter() - started)
    return {path: batch / seconds for path, seconds in best.items()}


def fastest_path(rates: dict[str, float]) -> str:
    """The fastest path, if it beats torch's default by `MARGIN`; else the default (a choice made
    on noise would stay in the cache)."""
    fastest = max(rates, key=rates.get)
    return fastest if rates[fastest] > MARGIN * rates[DEFAULT_PATH] else DEFAULT_PATH


def choose_conv_path(net: torch.nn.Module, store: ChoiceStore, bf16: bool = True) -> str:
    """The fastest path for `net` on this CPU: the stored choice, else measured and stored (among
    the float32 paths only where `bf16` is False: a choice of its own, under its own key)."""
    key = choice_key(net, bf16)
    known = store.get(key)
    if known in candidate_paths(bf16):
        return known
    rates = measure_paths(net, paths=candidate_paths(bf16))
    chosen = fastest_path(rates)
    store.put(key, chosen, rates)
    return chosen


def describe(rates: dict[str, Any]) -> str:
    """`rates` as one line: path=positions/s, side by side."""
    return "  ".join(f"{path}={float(rate):,.0f}/s" for path, rate in rates.items())
