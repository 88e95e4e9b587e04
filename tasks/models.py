"""Models by URI: the one call that turns a registry URI or a model directory into a ready net.

    from tasks.models import load_net
    net = load_net("models:/gozero-9x9@champion")     # or models:/gozero-9x9/3, or a model directory
    net.config.family, net.config.board_size           # "dual", 9: what it is and what it plays

Weights are read without unpickling code (storage.checkpoints). Nets are cached per process, since
a worker plays many games and tasks with one model: an alias moves when a model is promoted, so a
``models:/`` URI is resolved to its version on every call and only the version's net is cached; a
model directory is re-read when its config.json changes. Errors name the store that was searched.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from gocore.errors import GozeroError
from storage import layout

if TYPE_CHECKING:  # torch and MLflow load only when a model does: `gozero gtp --agent` starts fast
    from gocore.nn.nets import GoNet


class ModelError(GozeroError):
    """A model that cannot be found or loaded; the message says where it was looked for."""


@dataclass(frozen=True)
class LoadedModel:
    """A net ready to evaluate, and which model it is."""

    net: GoNet
    """The net, in eval mode on the CPU (`NetEvaluator` moves it to its device)."""
    version: str
    """``NAME/VERSION`` for a registered model, the resolved directory for a model directory."""


def load_net(uri: str | Path, data_dir: str | Path | None = None) -> GoNet:
    """The net a model URI (``models:/NAME@ALIAS``, ``models:/NAME/VERSION``, an artifact URI) or a
    model directory names; `data_dir` holds the registry (default: `storage.layout.data_dir`)."""
    return load_model(uri, data_dir).net


def load_model(uri: str | Path, data_dir: str | Path | None = None) -> LoadedModel:
    """`load_net` with the version it resolved to (for self-play rows and match records)."""
    from storage import registry
    from storage.checkpoints import CONFIG_FILE

    text, data = str(uri), None if data_dir is None else str(data_dir)
    try:
        if text.startswith("models:/"):  # resolve the alias now, cache the version's net
            name, selector = registry.parse_model_uri(text)
            if selector.isdigit():  # pinned: nothing to resolve (a missing version fails to load)
                return LoadedModel(_cached_net(f"models:/{name}/{int(selector)}", data, None), f"{name}/{int(selector)}")
            info = registry.describe(name, selector, data=_path(data))
            return LoadedModel(_cached_net(info.uri, data, None), f"{info.name}/{info.version}")
        path = Path(text)
        if "://" not in text and not path.is_dir():
            raise ModelError(f"no such model directory: {path.resolve()} (and not a models:/ URI)")
        config = path / CONFIG_FILE
        stamp = config.stat().st_mtime_ns if config.exists() else None  # re-saved in place: reload
        label = str(path.resolve()) if path.is_dir() else text
        return LoadedModel(_cached_net(text, data, stamp), label)
    except (registry.RegistryError, OSError) as error:
        raise ModelError(f"{error} (model registry: {registry.tracking_uri(_path(data))}, "
                         f"data dir {layout.data_dir(_path(data))})") from error


def default_model_uri(board_size: int, family: str = "dual") -> str:
    """The champion of the registered model for `board_size` and `family`."""
    from storage import registry

    return f"models:/{registry.model_name(board_size, family)}@{registry.CHAMPION}"


@functools.lru_cache(maxsize=16)
def _cached_net(uri: str, data: str | None, stamp: int | None) -> GoNet:
    """The net `uri` names, built once per process; `stamp` only keys the cache."""
    from gocore.nn.nets import build_net
    from storage import registry

    return registry.load(uri, build_net, _path(data))[0]


def _path(data: str | None) -> Path | None:
    return None if data is None else Path(data)
