"""Training: the AlphaGo Zero loss, supervised policy and value objectives, the loop that runs them.

Start at `train` (the per-batch loss terms are in `gocore.nn.losses`). It is pure: batches come
from a stream factory, metrics leave through `on_metrics(step, metrics)`, checkpoints through
`save_checkpoint(state)`, and a killed run comes back through `resume=`; it opens no files and
knows no orchestrator (a task saves the state with `storage.checkpoints` and logs the metrics to
MLflow).

Objectives:

- ``policy``: cross-entropy −π·log p, with π one-hot on the expert move (SGF datasets) or the
  search's visit distribution (self-play rows); AlphaGo's SL policy network.
- ``value``: (z − v)², z = +1 if the side to move won; AlphaGo's value network.
- ``dual``: (z − v)² − π·log p + c‖θ‖², one net with both heads (AlphaGo Zero); a net with
  auxiliary heads adds ownership and score terms on batches that carry their targets
  (`gocore.nn.aux_heads`), weighted by `ownership_weight` and `score_weight`.

The L2 term is the optimizer's weight decay (every parameter), not part of the autograd loss:
`weight_decay` w gives the gradient w·θ, i.e. the term (w/2)‖θ‖² (minigo's convention; the
paper's c‖θ‖² is w = 2c). Reports give it as ``l2``, apart from ``loss`` (the data terms).

Steps count optimizer updates: step s (1-based) applies the s-th batch. A checkpoint taken after
step s holds the weights, optimizer state, RNG state and config; resuming from it asks the
stream factory for the train stream with `skip_batches=s`, which must yield exactly the batches
an uninterrupted stream yields after its first s (`storage.stream.BatchStream` does, by
replaying its seeded reads), so a resumed run ends at the configured step with the same
weights as an uninterrupted one on deterministic hardware (CPU).
"""

from __future__ import annotations

import copy
import dataclasses
import math
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import torch

from gocore.errors import GozeroError
from gocore.nn import cpu_precision
from gocore.nn.batch_device import batch_tensors
from gocore.nn.device import autocast_context, choose_device
from gocore.nn.losses import has_aux_heads, loss_terms
from gocore.nn.nets import GoNet

OBJECTIVES = ("policy", "value", "dual")
OPTIMIZERS = ("sgd", "adamw")
LR_SCHEDULES = ("steps", "cosine")
OPTIONAL_FIELDS = {"lr_schedule": "steps", "value_mix": 0.0, "cpu_bf16": False}  # in `to_dict` unless at these
_ALWAYS = object()
# Fields a resumed run may change: the same batches and update of every step (device, cpu_bf16: at their precision).
RESUMABLE_CHANGES = ("steps", "checkpoint_every", "val_every", "val_batches", "log_every", "device", "compile",
                     "loader_workers", "cpu_bf16")


class TrainError(GozeroError, ValueError):
    """A training setup that cannot work: objective vs net, config, stream or resume mismatch."""


@dataclass(frozen=True)
class TrainConfig:
    """How to train; stored in every checkpoint and logged as run parameters."""

    objective: str = "dual"  # policy (SL cross-entropy), value (MSE on z) or dual (AlphaGo Zero)
    steps: int = 10_000  # optimizer updates in the whole run
    batch_size: int = 256  # rows per update (the stream must yield batches of this size)
    optimizer: str = "sgd"  # sgd (with momentum) or adamw
    lr: float = 0.01  # learning rate before the first drop
    lr_steps: tuple[float, ...] = (0.5, 0.75)  # fractions of `steps` after which lr is multiplied by lr_decay
    lr_decay: float = 0.1  # factor applied at each lr step
    lr_schedule: str = "steps"  # steps (lr_steps and lr_decay) or cosine (lr * (1 + cos(pi * step / steps)) / 2)
    momentum: float = 0.9  # SGD momentum (AlphaGo Zero: 0.9)
    weight_decay: float = 1e-4  # c: gradient c·θ, i.e. the loss term (c/2)‖θ‖² (decoupled for adamw)
    value_weight: float = 1.0  # weight of the value loss in `dual` (AlphaGo Zero: 1)
    ownership_weight: float = 1.5  # weight of the ownership loss (nets with aux heads; KataGo: 1.5)
    score_weight: float = 0.5  # weight of the score loss (nets with aux heads); not tuned yet
    grad_clip: float | None = None  # max global gradient norm; None = no clipping
    checkpoint_every: int = 1000  # steps between checkpoints (and always at the last step); 0 = only last
    seed: int = 0  # torch seed; the data order is the stream's seed
    device: str = "auto"  # auto (CUDA, then MPS, else CPU), cpu, cuda, cuda:<i>, mps
    compile: bool = False  # run the net through torch.compile
    val_every: int = 1000  # steps between validation passes (and at the last step); 0 = never
    val_batches: int = 50  # batches per validation pass at most
    log_every: int = 50  # steps between training-metric reports (and at the last step)
    loader_workers: int = 0  # 0 numpy symmetry; 1 uint8 batches, symmetry on the device; n >= 2 n decoding processes
    value_mix: float = 0.0  # self-play value target (1 - m) * z + m * q, q the root's searched value (KataGo); 0: z
    cpu_bf16: bool = False  # on a CPU that does bf16 natively (AMX, AVX512-BF16): bf16 autocast (`cpu_precision`)

    def __post_init__(self) -> None:
        problems = [message for is_bad, message in (
            (self.objective not in OBJECTIVES, f"objective must be one of {OBJECTIVES}"),
            (self.optimizer not in OPTIMIZERS, f"optimizer must be one of {OPTIMIZERS}"),
            (self.lr_schedule not in LR_SCHEDULES, f"lr_schedule must be one of {LR_SCHEDULES}"),
            (self.steps < 1 or self.batch_size < 1, "steps and batch_size must be >= 1"),
            (not self.lr > 0, "lr must be > 0"),
            (any(not 0 < f < 1 for f in self.lr_steps), "lr_steps are fractions in (0, 1)"),
            (min(self.checkpoint_every, self.val_every, self.val_batches, self.loader_workers) < 0
             or self.log_every < 1, "checkpoint_every, val_every, val_batches, loader_workers must be >= 0 "
             "and log_every >= 1"),
            (not 0 <= self.value_mix <= 1, "value_mix must be in [0, 1]"),
        ) if is_bad]
        if problems:
            raise TrainError("; ".join(problems))

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready dict of every field (`OPTIONAL_FIELDS` only when not at their default: the
        configs of runs made before they existed, and their run keys, stay as they were)."""
        data = {**dataclasses.asdict(self), "lr_steps": list(self.lr_steps)}
        return {key: value for key, value in data.items() if OPTIONAL_FIELDS.get(key, _ALWAYS) != value}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TrainConfig:
        """The config from `to_dict` output (lists become tuples)."""
        return cls(**{**data, "lr_steps": tuple(data.get("lr_steps", ()))})


TINY = TrainConfig(steps=200, batch_size=32, optimizer="adamw", lr=2e-3, lr_steps=(0.75,),
                   checkpoint_every=100, val_every=100, val_batches=10, log_every=10)  # tests
SMALL = TrainConfig(steps=20_000, batch_size=256, lr=0.02, checkpoint_every=1000,
                    val_every=1000, val_batches=40, log_every=50)  # 9x9 on CPU, hours
FULL = TrainConfig(steps=200_000, batch_size=1024, lr=0.01, lr_steps=(4 / 7, 6 / 7),
                   checkpoint_every=5000, val_every=5000, val_batches=50, log_every=100)  # GPU; AGZ's lr drops
PRESETS: dict[str, TrainConfig] = {"tiny": TINY, "small": SMALL, "full": FULL}


class BatchLike(Protocol):
    """What the loop reads from a batch (`storage.stream.Batch` is one)."""

    planes: np.ndarray  # (B, C, N, N) float32, or uint8 with `symmetry_pending` (see `batch_device`)
    move: np.ndarray  # (B,) int64 target move (pass = N*N)
    value: np.ndarray  # (B,) float32 z for the side to move
    pi: np.ndarray | None  # (B, N*N+1) float32 target distribution, or None (one-hot on move)
    # Optional (getattr): ownership (B, N*N), score (B,), aux_mask (B,) float32: see `aux_heads.AUX_KEYS`.


StreamFactory = Callable[[str, int], Iterable[BatchLike]]
"""`factory(split, skip_batches)`: split 'train' (endless, seeded) or 'val' (one pass)."""


@dataclass(frozen=True)
class TrainState:
    """Everything a checkpoint holds; `storage.checkpoints.save_training_checkpoint` takes these
    fields, and its `TrainingCheckpoint` (same fields) can be passed back as `resume`."""

    step: int  # optimizer updates taken
    model_state: dict[str, torch.Tensor]  # the net's state_dict, CPU tensors
    optimizer_state: dict[str, Any]  # the optimizer's state_dict
    config: dict[str, Any]  # TrainConfig.to_dict()
    rng_state: dict[str, Any] | None  # torch generator states
    extra: dict[str, Any]  # JSON: the data position (batches consumed)


@dataclass(frozen=True)
class TrainResult:
    """How a `train` call ended."""

    step: int  # the last step taken (= config.steps)
    start_step: int  # the step it resumed from (0 = a fresh run)
    seed: int  # the torch seed used
    device: str  # where it ran
    metrics: dict[str, float]  # the last training report (the ``train/*`` keys without the prefix)
    val_metrics: dict[str, float]  # the last validation pass (empty if none ran)
    samples_per_s: float  # training throughput over this call, data loading included
    seconds: float  # wall time of this call


# ---------------------------------------------------------------- pieces
def learning_rate(config: TrainConfig, step: int) -> float:
    """The learning rate of step `step` (1-based): lr × lr_decay per lr step passed, or the cosine
    schedule from lr down to 0 at the last step."""
    if config.lr_schedule == "cosine":
        return config.lr * 0.5 * (1.0 + math.cos(math.pi * (step - 1) / config.steps))
    drops = sum(step > fraction * config.steps for fraction in config.lr_steps)
    return config.lr * config.lr_decay ** drops


def make_optimizer(net: torch.nn.Module, config: TrainConfig) -> torch.optim.Optimizer:
    """SGD with momentum (the papers) or AdamW, with the config's weight decay on every parameter."""
    if config.optimizer == "sgd":
        return torch.optim.SGD(net.parameters(), lr=config.lr, momentum=config.momentum,
                               weight_decay=config.weight_decay)
    return torch.optim.AdamW(net.parameters(), lr=config.lr, weight_decay=config.weight_decay)


def check_objective(net: GoNet, objective: str) -> None:
    """TrainError unless the net has the heads the objective trains."""
    family = net.config.family
    needs = {"policy": ("dual", "policy", "rl"), "value": ("dual", "value"), "dual": ("dual",)}
    if family not in needs[objective]:
        raise TrainError(f"objective {objective!r} cannot train a {family!r} net; "
                         f"it needs one of {needs[objective]}")


def objective_loss(terms: Mapping[str, torch.Tensor], config: TrainConfig) -> torch.Tensor:
    """The loss to minimise (the L2 term is the optimizer's weight decay)."""
    if config.objective == "policy":
        return terms["policy_loss"]
    if config.objective == "value":
        return terms["value_mse"]
    loss = terms["policy_loss"] + config.value_weight * terms["value_mse"]
    if "ownership_loss" in terms:
        loss = loss + config.ownership_weight * terms["ownership_loss"] + config.score_weight * terms["score_loss"]
    return loss


def l2_term(net: torch.nn.Module, config: TrainConfig) -> float:
    """(c/2)‖θ‖², the L2 term that SGD's weight decay c minimises."""
    with torch.no_grad():
        return 0.5 * config.weight_decay * sum(float(p.square().sum()) for p in net.parameters())


@torch.no_grad()
def evaluate(net: GoNet, batches: Iterable[BatchLike], device: torch.device | None = None,
             max_batches: int | None = None) -> dict[str, float]:
    """Mean loss terms over `batches` (policy_loss, policy_top1, value_mse) in eval mode; plus rows."""
    device = device or next(net.parameters()).device
    was_training, sums, rows = net.training, {}, 0
    stream = _closing(iter(batches))
    net.eval()
    try:
        for index, batch in enumerate(stream):
            if max_batches is not None and index >= max_batches:
                break
            with autocast_context(device):
                terms = loss_terms(net, net.config.family, batch_tensors(batch, device), has_aux_heads(net))
            for name, value in terms.items():
                sums[name] = sums.get(name, 0.0) + float(value) * len(batch.move)
            rows += len(batch.move)
    finally:
        stream.close()  # stops a prefetch thread now, not when garbage collected
        net.train(was_training)
    return {**{name: total / rows for name, total in sums.items()}, "rows": float(rows)} if rows else {}


def _closing(iterator: Iterator[Any]) -> Iterator[Any]:
    """Yield from `iterator`, closing it (a stream's prefetch thread stops) when done or abandoned."""
    try:
        yield from iterator
    finally:
        close = getattr(iterator, "close", None)
        if close is not None:
            close()


# ---------------------------------------------------------------- checkpoints and resume
def _rng_state() -> dict[str, Any]:
    return {"torch": torch.get_rng_state(),
            "cuda": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else []}


def _restore_rng(state: Mapping[str, Any]) -> None:
    torch.set_rng_state(state["torch"])
    if state.get("cuda") and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


def _train_state(net: torch.nn.Module, optimizer: torch.optim.Optimizer, config: TrainConfig,
                 step: int) -> TrainState:
    """A snapshot of the state after `step` updates (copies: training goes on changing the originals)."""
    model_state = {name: tensor.detach().to("cpu", copy=True) for name, tensor in net.state_dict().items()}
    return TrainState(step=step, model_state=model_state, optimizer_state=copy.deepcopy(optimizer.state_dict()),
                      config=config.to_dict(), rng_state=_rng_state(), extra={"batches_consumed": step})


def _resume(net: torch.nn.Module, optimizer: torch.optim.Optimizer, resume: TrainState,
            config: TrainConfig) -> int:
    """Load a checkpoint's state into the net and optimizer; returns its step."""
    saved = TrainConfig.from_dict(resume.config)
    changed = [f.name for f in dataclasses.fields(TrainConfig)
               if f.name not in RESUMABLE_CHANGES and getattr(saved, f.name) != getattr(config, f.name)]
    if changed:
        raise TrainError(f"cannot resume: the checkpoint was trained with different {changed}")
    if resume.step > config.steps:
        raise TrainError(f"checkpoint is at step {resume.step}, past the configured {config.steps} steps")
    net.load_state_dict(resume.model_state)
    optimizer.load_state_dict(resume.optimizer_state)
    if resume.rng_state:
        _restore_rng(resume.rng_state)
    return int(resume.step)


# ---------------------------------------------------------------- the loop
class _Meter:
    """Sums of step metrics over one reporting window, and its wall time."""

    def __init__(self) -> None:
        self.sums: dict[str, torch.Tensor] = {}
        self.steps = self.samples = 0
        self.wait = 0.0
        self.started = time.perf_counter()

    def add(self, terms: Mapping[str, torch.Tensor], loss: torch.Tensor, samples: int, wait: float) -> None:
        for name, value in {**terms, "loss": loss}.items():
            self.sums[name] = self.sums.get(name, 0.0) + value.detach()  # no sync: read at report time
        self.steps, self.samples, self.wait = self.steps + 1, self.samples + samples, self.wait + wait

    def report(self) -> dict[str, float]:
        """Window means; samples/s and the fraction of time spent waiting for data."""
        means = {name: float(total) / self.steps for name, total in self.sums.items()}  # syncs the device
        seconds = time.perf_counter() - self.started
        return {**means, "samples_per_s": self.samples / seconds, "data_wait": self.wait / seconds}


def train(net: GoNet, stream_factory: StreamFactory, config: TrainConfig, *,
          save_checkpoint: Callable[[TrainState], None] | None = None, resume: TrainState | None = None,
          on_metrics: Callable[[int, dict[str, float]], None] | None = None) -> TrainResult:
    """Train `net` in place to `config.steps` updates; returns the last metrics.

    Reports ``train/*`` metrics every `log_every` steps and ``val/*`` every `val_every`, via
    `on_metrics(step, metrics)`; checkpoints every `checkpoint_every` steps and at the end.
    """
    check_objective(net, config.objective)
    started, report = time.perf_counter(), on_metrics or (lambda step, metrics: None)
    device = choose_device(config.device)
    torch.manual_seed(config.seed)
    net.to(device).train()
    if bf16 := cpu_precision.wanted(config.cpu_bf16, device):
        cpu_precision.layout(net, True)
    optimizer = make_optimizer(net, config)
    start = _resume(net, optimizer, resume, config) if resume is not None else 0
    model = torch.compile(net) if config.compile else net
    run = _Run(net, model, optimizer, config, device, report)
    batches = _closing(iter(stream_factory("train", start)))
    try:
        for step in range(start + 1, config.steps + 1):
            run.step(step, batches)
            run.after_step(step, stream_factory, save_checkpoint)
    finally:
        batches.close()
        if bf16:
            cpu_precision.layout(net, False)
    seconds = time.perf_counter() - started
    return TrainResult(step=config.steps, start_step=start, seed=config.seed, device=str(device),
                       metrics=run.last_metrics, val_metrics=run.last_val,
                       samples_per_s=run.samples / max(run.train_seconds, 1e-9), seconds=seconds)


class _Run:
    """The state of one `train` call between steps."""

    def __init__(self, net: GoNet, model: torch.nn.Module, optimizer: torch.optim.Optimizer,
                 config: TrainConfig, device: torch.device, report: Callable[[int, dict[str, float]], None]):
        self.net, self.model, self.optimizer, self.config = net, model, optimizer, config
        self.device, self.report, self.family = device, report, net.config.family
        self.meter = _Meter()
        self.last_metrics: dict[str, float] = {}
        self.last_val: dict[str, float] = {}
        self.samples, self.train_seconds = 0, 0.0
        self.cpu_bf16 = cpu_precision.wanted(config.cpu_bf16, device)

    def step(self, step: int, batches: Iterator[BatchLike]) -> None:
        """One update on the next batch."""
        begun = time.perf_counter()
        batch = next(batches, None)
        if batch is None:
            raise TrainError(f"the train stream ended at step {step}; it must be endless")
        if len(batch.move) != self.config.batch_size:
            raise TrainError(f"the stream yields batches of {len(batch.move)} rows, "
                             f"the config says {self.config.batch_size}")
        tensors = batch_tensors(batch, self.device)
        tensors["planes"] = cpu_precision.planes(tensors["planes"], self.cpu_bf16)
        wait = time.perf_counter() - begun
        for group in self.optimizer.param_groups:
            group["lr"] = learning_rate(self.config, step)
        with cpu_precision.autocast(self.device, self.cpu_bf16):
            terms = loss_terms(self.model, self.family, tensors, has_aux_heads(self.net))
        loss = objective_loss(terms, self.config)
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        if self.config.grad_clip is not None:
            terms["grad_norm"] = torch.nn.utils.clip_grad_norm_(self.net.parameters(), self.config.grad_clip)
        self.optimizer.step()
        self.meter.add(terms, loss, len(batch.move), wait)
        self.samples += len(batch.move)
        self.train_seconds += time.perf_counter() - begun

    def after_step(self, step: int, stream_factory: StreamFactory,
                   save_checkpoint: Callable[[TrainState], None] | None) -> None:
        """Report, validate and checkpoint when their period (or the last step) comes."""
        config, is_last = self.config, step == self.config.steps
        if step % config.log_every == 0 or is_last:
            metrics = self.meter.report()
            if not math.isfinite(metrics["loss"]):
                raise TrainError(f"loss is {metrics['loss']} at step {step}: lower lr or set grad_clip")
            self.last_metrics = {**metrics, "lr": learning_rate(config, step), "l2": l2_term(self.net, config)}
            self.report(step, {f"train/{k}": v for k, v in self.last_metrics.items()})
            self.meter = _Meter()
        paused = time.perf_counter()
        if config.val_every and config.val_batches and (step % config.val_every == 0 or is_last):
            self.last_val = evaluate(self.net, stream_factory("val", 0), self.device, config.val_batches)
            if self.last_val:
                self.report(step, {f"val/{k}": v for k, v in self.last_val.items()})
        is_checkpoint = is_last or (config.checkpoint_every and step % config.checkpoint_every == 0)
        if save_checkpoint is not None and is_checkpoint:
            save_checkpoint(_train_state(self.net, self.optimizer, config, step))
        self.meter.started += time.perf_counter() - paused  # validation is not training time
