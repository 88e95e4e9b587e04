"""Checkpoints: model weights and training state on disk, loaded without unpickling code.

Two layouts:

    <model>/                  a saved model (`save_model`), a directory:
        weights.pt            torch.save of the state_dict: tensors only, on CPU
        config.json           written last: {"format", "format_version", "config", "extra",
                              "weights_sha256", "torch_version"}
    <file>.pt                 a training checkpoint (`save_training_checkpoint`), one file:
                              {"format", "format_version", "step", "model", "optimizer",
                               "config_json", "extra_json", "rng"}

Every read goes through ``torch.load(weights_only=True, map_location="cpu")``, which builds
only tensors and plain containers and refuses any other pickled object. Only torch.save zip
archives are read at all: a raw pickle (or torch's pre-1.6 format) is refused before any
unpickler sees it. Every failure is a `CheckpointError` naming the path and the reason.

A model directory keeps the SHA-256 of its weights in config.json, so a directory caught
half-overwritten (new weights, old config) is refused rather than mismatched. The network config
is plain JSON: the caller turns it into a module (`load_model(path, gocore.nn.nets.build_net)`),
so storage does not import gocore.
"""

from __future__ import annotations

import hashlib
import io
import json
import random
import zipfile
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from gocore.errors import GozeroError
from storage.atomic import atomic_path, write_bytes, write_json
from storage.layout import CONFIG_FILE

WEIGHTS_FILE = "weights.pt"
MODEL_FORMAT = "gozero-model"
TRAINING_FORMAT = "gozero-training-checkpoint"
FORMAT_VERSION = 1
_PICKLE_PROTO = 0x80  # first byte of every binary pickle (protocol >= 2)
_PLAIN_SCALARS = (type(None), bool, int, float, str, torch.dtype, torch.device)


class CheckpointError(GozeroError):
    """A checkpoint that cannot be saved or loaded: missing, truncated, corrupt or unsafe."""

    def __init__(self, path: Path | str, reason: str):
        self.path, self.reason = Path(path), reason
        super().__init__(f"{path}: {reason}")


@dataclass(frozen=True)
class TrainingCheckpoint:
    """What `load_training_checkpoint` returns; states go to `load_state_dict` as they are."""

    step: int
    """Optimizer steps taken when the checkpoint was written."""
    model_state: dict[str, torch.Tensor]
    """The model's state_dict (CPU tensors)."""
    optimizer_state: dict[str, Any]
    """The optimizer's state_dict."""
    config: dict[str, Any]
    """The run's config (JSON)."""
    rng_state: dict[str, Any] | None
    """Random generator states (see `capture_rng_state`), or None."""
    extra: dict[str, Any]
    """Anything else the trainer saved (JSON), e.g. data position or best loss."""


# ---------------------------------------------------------------- models

def save_model(path: Path, module: nn.Module, config: Mapping[str, Any],
               extra: Mapping[str, Any] | None = None) -> Path:
    """Write `module`'s weights and its JSON config into the model directory `path`; returns it."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise CheckpointError(path, "a model is saved as a directory, but a file is in the way")
    module = getattr(module, "_orig_mod", module)  # a torch.compile wrapper: save the real net
    state = OrderedDict((key, value.detach().cpu()) for key, value in module.state_dict().items())
    _check_loadable(path, state, "state_dict")
    meta = {"format": MODEL_FORMAT, "format_version": FORMAT_VERSION,
            "config": _json_copy(path, config, "config"), "extra": _json_copy(path, extra or {}, "extra"),
            "torch_version": torch.__version__}
    buffer = io.BytesIO()
    torch.save(state, buffer)
    data = buffer.getvalue()
    meta["weights_sha256"] = hashlib.sha256(data).hexdigest()
    write_bytes(path / WEIGHTS_FILE, data)
    write_json(path / CONFIG_FILE, meta)  # last: a model without config.json is incomplete
    return path


def read_model_info(path: Path) -> dict[str, Any]:
    """The model directory's config.json (config, extra, format, weights hash) without the weights."""
    config_path = Path(path) / CONFIG_FILE
    if not Path(path).is_dir():
        raise CheckpointError(path, "no such model directory" if not Path(path).exists()
                              else f"not a model directory ({WEIGHTS_FILE} + {CONFIG_FILE})")
    try:
        meta = json.loads(config_path.read_text())
    except FileNotFoundError:
        raise CheckpointError(path, f"no {CONFIG_FILE}: not a saved model, or its save was interrupted") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise CheckpointError(config_path, f"unreadable JSON ({error})") from None
    if not isinstance(meta, dict) or meta.get("format") != MODEL_FORMAT:
        raise CheckpointError(config_path, f"not a {MODEL_FORMAT} config")
    _check_version(config_path, meta)
    return meta


def load_weights(path: Path) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
    """(state_dict on CPU, config) of the model directory `path`."""
    meta = read_model_info(path)
    weights_path = Path(path) / WEIGHTS_FILE
    data = _read_bytes(weights_path)
    if hashlib.sha256(data).hexdigest() != meta.get("weights_sha256"):
        raise CheckpointError(weights_path, f"does not match the hash in {CONFIG_FILE} "
                              "(partly overwritten, or changed by hand)")
    state = _load_weights_only(weights_path, data)
    if not isinstance(state, Mapping) or not all(
            isinstance(k, str) and isinstance(v, torch.Tensor) for k, v in state.items()):
        raise CheckpointError(weights_path, "does not hold a state_dict of named tensors")
    return dict(state), meta["config"]


def load_model(path: Path, build: Callable[[dict[str, Any]], nn.Module]) -> tuple[nn.Module, dict[str, Any]]:
    """(module, config): `build(config)` filled with the saved weights, in eval mode, on CPU."""
    state, config = load_weights(path)
    module = build(config)
    try:
        module.load_state_dict(state, strict=True)
    except RuntimeError as error:
        first_line = str(error).strip().splitlines()[0]
        raise CheckpointError(path, f"weights do not fit the net built from its config: {first_line}") from None
    return module.eval(), config


def load_model_checked(label: str, path: Path,
                       build: Callable[[dict[str, Any]], nn.Module]) -> tuple[nn.Module, dict[str, Any]]:
    """`load_model`, with every refusal (unsafe pickle, damage, unbuildable config) one CheckpointError
    whose reason names `label` (the URI the user gave) rather than `path` (perhaps a temp copy)."""
    try:
        return load_model(path, build)
    except CheckpointError as error:
        where = "" if error.path == path else f"{error.path.name}: "
        raise CheckpointError(path, f"cannot load {label}: {where}{error.reason}") from error
    except (ValueError, KeyError, TypeError) as error:  # `build` refusing the stored config
        raise CheckpointError(path, f"cannot load {label}: its config builds no net ({error})") from error


# ---------------------------------------------------------------- training state

def save_training_checkpoint(path: Path, model_state: Mapping[str, torch.Tensor],
                             optimizer_state: Mapping[str, Any], step: int,
                             config: Mapping[str, Any], rng_state: Mapping[str, Any] | None = None,
                             extra: Mapping[str, Any] | None = None) -> Path:
    """Write one training checkpoint file atomically; returns `path`."""
    path = Path(path)
    payload = {"format": TRAINING_FORMAT, "format_version": FORMAT_VERSION, "step": int(step),
               "model": OrderedDict(model_state), "optimizer": dict(optimizer_state),
               "config_json": json.dumps(_json_copy(path, config, "config")),
               "extra_json": json.dumps(_json_copy(path, extra or {}, "extra")),
               "rng": None if rng_state is None else dict(rng_state)}
    _check_loadable(path, payload, "checkpoint")
    with atomic_path(path) as temp:
        torch.save(payload, temp)
    return path


def load_training_checkpoint(path: Path) -> TrainingCheckpoint:
    """The training checkpoint at `path`, every tensor on CPU."""
    path = Path(path)
    payload = _load_weights_only(path, _read_bytes(path))
    if not isinstance(payload, dict) or payload.get("format") != TRAINING_FORMAT:
        raise CheckpointError(path, f"not a {TRAINING_FORMAT} file")
    _check_version(path, payload)
    try:
        return TrainingCheckpoint(step=int(payload["step"]), model_state=dict(payload["model"]),
                                  optimizer_state=payload["optimizer"],
                                  config=json.loads(payload["config_json"]), rng_state=payload["rng"],
                                  extra=json.loads(payload["extra_json"]))
    except (KeyError, TypeError, ValueError) as error:
        raise CheckpointError(path, f"incomplete training checkpoint ({error!r})") from None


def capture_rng_state() -> dict[str, Any]:
    """The global generators' states (torch CPU and CUDA, numpy legacy, python), as plain data."""
    numpy_state = np.random.get_state(legacy=False)
    numpy_state["state"]["key"] = numpy_state["state"]["key"].tolist()  # ndarray: not weights-only
    return {"torch": torch.get_rng_state(),
            "cuda": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else [],
            "numpy": numpy_state, "python": random.getstate()}


def restore_rng_state(state: Mapping[str, Any]) -> None:
    """Put back the global generator states taken by `capture_rng_state`."""
    torch.set_rng_state(state["torch"])
    if state["cuda"] and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])
    numpy_state = {**state["numpy"], "state": dict(state["numpy"]["state"])}
    numpy_state["state"]["key"] = np.asarray(numpy_state["state"]["key"], dtype=np.uint32)
    np.random.set_state(numpy_state)
    version, internal, gauss = state["python"]
    random.setstate((version, tuple(internal), gauss))


# ---------------------------------------------------------------- reading safely

def _read_bytes(path: Path) -> bytes:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise CheckpointError(path, "no such file") from None
    except OSError as error:
        raise CheckpointError(path, f"unreadable ({error.strerror or error})") from None
    if not data:
        raise CheckpointError(path, "empty file (its write was interrupted?)")
    return data


def _load_weights_only(path: Path, data: bytes) -> Any:
    """torch.load of `data` that builds only tensors and plain containers; CheckpointError otherwise."""
    if not zipfile.is_zipfile(io.BytesIO(data)):
        if data[0] == _PICKLE_PROTO:
            raise CheckpointError(path, "is not a weights-only checkpoint: it is a raw pickle, "
                                  "which can run code when loaded; refusing to unpickle it")
        raise CheckpointError(path, "corrupt or truncated: not a torch.save archive")
    try:
        return torch.load(io.BytesIO(data), map_location="cpu", weights_only=True)
    except Exception as error:  # torch raises many types for damaged archives
        message = str(error)
        if "Weights only load failed" in message:
            raise CheckpointError(path, "is not a weights-only checkpoint: it holds pickled Python "
                                  f"objects ({_blocked_object(message)}); refusing to unpickle it") from None
        first_line = message.strip().splitlines()[0] if message.strip() else ""
        raise CheckpointError(path, f"corrupt or truncated ({type(error).__name__}: {first_line})") from None


def _blocked_object(message: str) -> str:
    """The line of torch's weights-only error that names what was refused."""
    for line in message.splitlines():
        if "GLOBAL" in line or "Unsupported" in line:
            return line.strip().rstrip(".")
    return "an object outside tensors and plain containers"


# ---------------------------------------------------------------- writing checks

def _check_loadable(path: Path, obj: Any, where: str) -> None:
    """Refuse to write what `torch.load(weights_only=True)` would refuse to read back."""
    if isinstance(obj, torch.Tensor) or type(obj) in _PLAIN_SCALARS or isinstance(obj, torch.Size):
        return
    if type(obj) in (dict, OrderedDict):
        for key, value in obj.items():
            _check_loadable(path, key, f"{where} key")
            _check_loadable(path, value, f"{where}[{key!r}]")
        return
    if type(obj) in (list, tuple, set):
        for index, value in enumerate(obj):
            _check_loadable(path, value, f"{where}[{index}]")
        return
    raise CheckpointError(path, f"cannot save {where}: a {type(obj).__module__}.{type(obj).__qualname__} "
                          "would not load weights-only; use tensors, numbers, strings and plain containers")


def _json_copy(path: Path, value: Mapping[str, Any], what: str) -> dict[str, Any]:
    """`value` as it will read back from JSON; CheckpointError if it is not JSON data."""
    try:
        return json.loads(json.dumps(dict(value), allow_nan=False))
    except (TypeError, ValueError) as error:
        raise CheckpointError(path, f"cannot save {what}: not JSON data ({error})") from None


def _check_version(path: Path, meta: Mapping[str, Any]) -> None:
    version = meta.get("format_version")
    if version != FORMAT_VERSION:
        raise CheckpointError(path, f"format version {version!r}; this gozero reads version {FORMAT_VERSION}")
