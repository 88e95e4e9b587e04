"""Models by URI: the one call that turns a registry URI or a model directory into a ready net.

    from tasks.app.models import load_net
    net = load_net("models:/gozero-9x9@champion")     # or models:/gozero-9x9/3, or a model directory
    net.config.family, net.config.board_size           # "dual", 9: what it is and what it plays
    rollouts = load_rollout_policy("models:/gozero-9x9-rollout/1", 9)   # AlphaGo's fast rollouts, numba
    ModelRef("gozero-9x9", 7).uri                       # "models:/gozero-9x9/7": a pinned version

Weights are read without unpickling code (storage.checkpoints). Nets are cached per process, since
a worker plays many games and tasks with one model: an alias moves when a model is promoted, so a
``models:/`` URI is resolved to its version on every call and only the version's net is cached; a
model directory is re-read when its config.json changes. Errors name the store that was searched.

Promotion (moving the ``champion`` alias and announcing it to Prefect) is `tasks.promotion`'s.
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
    from gocore.search.rollout import PatternRollouts


class ModelError(GozeroError):
    """A model that cannot be found or loaded; the message says where it was looked for."""


@dataclass(frozen=True)
class LoadedModel:
    """A net ready to evaluate, and which model it is."""

    net: GoNet
    """The net, in eval mode on the CPU (`NetEvaluator` moves it to its device)."""
    version: str
    """``NAME/VERSION`` for a registered model, the resolved directory for a model directory."""


@dataclass(frozen=True)
class ModelRef:
    """One registered version: what the loops play and promote."""

    name: str
    version: int

    @property
    def uri(self) -> str:
        """``models:/NAME/VERSION``: pinned, unlike the moving ``@champion``."""
        return f"models:/{self.name}/{self.version}"

    @property
    def label(self) -> str:
        return f"{self.name}/{self.version}"


def load_net(uri: str | Path, data_dir: str | Path | None = None) -> GoNet:
    """The net a model URI (``models:/NAME@ALIAS``, ``models:/NAME/VERSION``, an artifact URI) or a
    model directory names; `data_dir` holds the registry (default: `storage.layout.data_dir`)."""
    return load_model(uri, data_dir).net


def load_model(uri: str | Path, data_dir: str | Path | None = None) -> LoadedModel:
    """`load_net` with the version it resolved to (for self-play rows and match records)."""
    text, data = str(uri), None if data_dir is None else str(data_dir)
    if text.startswith("models:/") or "://" in text:
        return _load_registered(text, data)
    from storage.checkpoints import CONFIG_FILE

    path = Path(text)
    if not path.is_dir():
        raise ModelError(f"no such model directory: {path.resolve()} (and not a models:/ URI)")
    config = path / CONFIG_FILE
    stamp = config.stat().st_mtime_ns if config.exists() else None  # re-saved in place: reload
    return LoadedModel(_cached_net(text, data, stamp), str(path.resolve()))


def conv_path_for(net: GoNet, data_dir: str | Path | None = None, device: str = "auto", bf16: bool = True) -> str:
    """The fastest CPU convolution path for `net` on this machine, for `NetEvaluator(conv_path=...)`:
    measured on the first start and kept in the data dir (`gocore.nn.conv_paths`,
    `storage.conv_cache`); torch's default when `device` (as `choose_device` reads it) is a GPU.
    `bf16=False`: the fastest float32 path (bf16 is not among the candidates)."""
    from gocore.nn import conv_paths
    from gocore.nn.device import choose_device
    from storage.conv_cache import JsonChoiceStore

    if choose_device(device).type != "cpu":
        return conv_paths.DEFAULT_PATH
    store = JsonChoiceStore(layout.conv_cache_path(layout.data_dir(data_dir)))
    return conv_paths.choose_conv_path(net, store, bf16)


def _load_registered(text: str, data: str | None) -> LoadedModel:
    from storage import registry

    try:
        if text.startswith("models:/"):  # resolve the alias now, cache the version's net
            name, selector = registry.parse_model_uri(text)
            if selector.isdigit():  # pinned: nothing to resolve (a missing version fails to load)
                return LoadedModel(_cached_net(f"models:/{name}/{int(selector)}", data, None), f"{name}/{int(selector)}")
            info = registry.describe(name, selector, data=_path(data))
            return LoadedModel(_cached_net(info.uri, data, None), f"{info.name}/{info.version}")
        return LoadedModel(_cached_net(text, data, None), text)
    except (registry.RegistryError, OSError) as error:
        raise ModelError(_with_where(str(error), registry.tracking_uri(_path(data)),
                                     f"data dir {layout.data_dir(_path(data))}")) from error


def model_strength(uri: str, data_dir: str | Path | None = None) -> str | None:
    """``gozero-9x9 v7, ~12 kyu (Elo +112 ± 118 (95 %) vs GNU Go level 1, 84 games)``: the registered
    version a ``models:/`` URI resolves to and its ladder `strength` tag (``not on the ladder`` before
    the ladder rated it); None for a model directory or a registry that cannot say."""
    from storage import registry

    if not str(uri).startswith("models:/"):
        return None
    try:
        info = registry.describe(*registry.parse_model_uri(str(uri)), data=_path(None if data_dir is None
                                                                                 else str(data_dir)))
    except registry.RegistryError:
        return None
    return f"{info.name} v{info.version}, {info.tags.get('strength', 'not on the ladder')}"


def default_model_uri(board_size: int, family: str = "dual") -> str:
    """The champion of the registered model for `board_size` and `family`."""
    from storage import registry

    return f"models:/{registry.model_name(board_size, family)}@{registry.CHAMPION}"


def registered_champion(board_size: int, family: str, data_dir: str | Path | None = None) -> str | None:
    """`default_model_uri` if that model has a champion in the registry, else None."""
    from storage import registry

    try:
        registry.describe(registry.model_name(board_size, family), registry.CHAMPION,
                          None if data_dir is None else Path(data_dir))
    except registry.RegistryError:
        return None
    return default_model_uri(board_size, family)


@functools.lru_cache(maxsize=16)
def _cached_net(uri: str, data: str | None, stamp: int | None) -> GoNet:
    """The net `uri` names, built once per process; `stamp` only keys the cache."""
    from gocore.nn.nets import build_net

    if not uri.startswith("models:/") and "://" not in uri:  # a directory: no MLflow in this process
        from storage.checkpoints import CheckpointError, load_model_checked

        try:
            return load_model_checked(uri, Path(uri), build_net)[0]
        except CheckpointError as error:
            raise ModelError(error.reason) from error
    from storage import registry

    return registry.load(uri, build_net, _path(data))[0]


def local_model(uri: str, data_dir: str | Path | None = None) -> tuple[str, str] | None:
    """(local model directory, version label) a ``models:/`` URI resolves to now, for workers that
    should load it without MLflow (`storage.registry.local_copy`); None for anything else."""
    if not str(uri).startswith("models:/"):
        return None
    from storage import registry

    try:
        path, label = registry.local_copy(str(uri), _path(None if data_dir is None else str(data_dir)))
    except (registry.RegistryError, OSError) as error:
        raise ModelError(_with_where(str(error), registry.tracking_uri(_path(data_dir)))) from error
    return str(path), label


def _path(data: str | None) -> Path | None:
    return None if data is None else Path(data)


def load_rollout_policy(uri: str | Path, size: int, data_dir: str | Path | None = None) -> PatternRollouts:
    """The fast rollout policy a model spec names (a ``rollout`` net of `size`), ready for
    `AlphaGoAgent(..., rollout_policy=...)`; ModelError for another family or board size."""
    from gocore.search.rollout import PatternRollouts

    net = load_net(uri, data_dir)
    if net.config.family != "rollout" or net.config.board_size != size:
        raise ModelError(f"{uri} is a {net.config.board_size}x{net.config.board_size} {net.config.family} net, "
                         f"not a {size}x{size} rollout policy")
    return PatternRollouts(net.weights_array())


def _with_where(message: str, tracking_uri: str, *more: str) -> str:
    """`message` with where it looked (the registry, `more`), the registry named once: a registry
    error already names it."""
    where = [] if tracking_uri in message else [f"model registry: {tracking_uri}"]
    where += [item for item in more if item not in message]
    return f"{message} ({', '.join(where)})" if where else message
