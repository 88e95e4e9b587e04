"""The MLflow model registry: model names, versions, aliases, promotion, and loading a version.

    model       gozero-<N>x<N>            AlphaGo Zero dual nets
                gozero-<N>x<N>-<family>   AlphaGo policy, value and rollout nets
                baghchal                  Baghchal's dual nets (a net whose config names a game
                                          other than Go registers under the game's name)
    version     tags: family, board_size, generation, dataset, code_version; `promote` adds
                promotion_reason, promoted_at, previous_champion and the evidence (gate_win_rate,
                games, elo, ...), moves the alias `champion` and tags the old champion replaced_by

A registered model per family, because the alias `champion` belongs to a registered model and
AlphaGo needs a champion policy net and a champion value net at once. The name is for people:
`load` rebuilds the net from the config.json stored beside the weights (its `family` picks the
class) with the `build` the caller passes, e.g. ``gocore.nn.nets.build_net``: storage does not import
gocore. Models are plain artifacts registered by their artifact URI, never ``mlflow.pytorch``
(pickle, slow requirement inference); `load` downloads the directory and reads it through
`storage.checkpoints.load_model`, weights-only, so no code is ever unpickled. The runs that log
the models are storage.runs'; the store and its client are storage.mlflow_store's.
"""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
import urllib.parse
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mlflow import MlflowClient
from mlflow.exceptions import MlflowException

from storage import layout
from storage.layout import data_dir
from storage.mlflow_store import RegistryError, client, code_version, first_line, mlflow_errors, tracking_uri
from storage.registry_records import CHAMPION, VersionInfo
from storage.runs import MODEL_ARTIFACT, experiment_name, run_summary
from storage.sizes import MODEL_URI

if TYPE_CHECKING:
    from torch import nn

# storage.checkpoints (and so torch) is imported where models are read: listing, showing and
# promoting need neither, and `gozero models list` starts seconds sooner without them.
RESERVED_TAGS = frozenset({"family", "board_size", "generation", "dataset", "dataset_key", "code_version",
                           "promotion_reason", "promoted_at", "previous_champion", "replaced_by"})
_MODEL_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,250}$")


def model_name(board_size: int, family: str = "dual", game: str = "go") -> str:
    """Registered model of a board size and net family: ``gozero-9x9``, ``gozero-9x9-policy``; of
    another game, its name (``baghchal``)."""
    return experiment_name(board_size, game) + ("" if family == "dual" else f"-{family}")


@mlflow_errors
def register(run_id: str, *, generation: int | None = None, dataset: str | None = None,
             dataset_key: str | None = None, tags: Mapping[str, str] | None = None, data: Path | None = None,
             name: str | None = None) -> int:
    """Register the run's model/ as a version of `name` (default `model_name(board size, family)`);
    the version number. `dataset_key` (the content key of the dataset's build it was trained on) is
    tagged beside the dataset's name, so a dataset rebuilt later under the same name is seen not to
    be the model's."""
    store = client(data)
    run, net = store.get_run(run_id), _logged_net_config(store, run_id)
    family = net.get("family", "dual")
    name = name or model_name(net["board_size"], family, net.get("game", "go"))
    with contextlib.suppress(MlflowException):  # it exists (perhaps a racing process made it)
        store.create_registered_model(name)
    if done := store.search_model_versions(f"name = '{name}' and run_id = '{run_id}'"):
        return int(done[0].version)  # a retried task must not register the same run twice
    dataset = dataset if dataset is not None else run.data.params.get("dataset")
    facts = {"generation": generation, "dataset": dataset, "dataset_key": dataset_key}
    version_tags = {**(tags or {}), "family": family, "board_size": str(net["board_size"]),
                    "code_version": run.data.tags.get("code_version", code_version()),
                    **{k: str(v) for k, v in facts.items() if v is not None}}
    created = store.create_model_version(name, source=f"{run.info.artifact_uri}/{MODEL_ARTIFACT}",
                                          run_id=run_id, tags=version_tags)
    return int(created.version)


@mlflow_errors
def promote(name: str, version: int, reason: str, evidence: Mapping[str, Any] | None = None,
            data: Path | None = None) -> int | None:
    """Move `champion` to `version`, tagging it with reason, evidence and the champion it replaces (returned)."""
    evidence = {k: str(v) for k, v in (evidence or {}).items()}
    if clashes := sorted(RESERVED_TAGS & set(evidence)):
        raise RegistryError(f"evidence keys {clashes} are reserved version tags; rename them")
    store = client(data)
    previous = _model(store, name).aliases.get(CHAMPION)
    version = int(_version(store, name, version).version)
    if previous is not None and int(previous) == version:
        return version  # already champion: a retried promotion changes nothing
    stamp = datetime.now(UTC).isoformat(timespec="seconds")
    evidence |= {"promotion_reason": reason, "promoted_at": stamp, "previous_champion": str(previous or "none")}
    for key, value in evidence.items():
        store.set_model_version_tag(name, str(version), key, value)
    store.set_registered_model_alias(name, CHAMPION, str(version))  # after the tags that justify it
    if previous is not None:
        store.set_model_version_tag(name, str(previous), "replaced_by", str(version))
    return None if previous is None else int(previous)


@mlflow_errors
def tag_version(name: str, version: int, tags: Mapping[str, Any], data: Path | None = None) -> None:
    """Set (or overwrite) tags on one version, e.g. its ladder Elo once it is rated."""
    if clashes := sorted(RESERVED_TAGS & set(tags)):
        raise RegistryError(f"tags {clashes} are reserved version tags; rename them")
    store = client(data)
    for key, value in tags.items():
        store.set_model_version_tag(name, str(int(version)), key, str(value))


@mlflow_errors
def list_models(board_size: int | None = None, data: Path | None = None) -> list[str]:
    """Names of the registered gozero models (of one board size if given), sorted."""
    names = _model_names(client(data))
    base = model_name(board_size) if board_size is not None else None
    return [n for n in names if base is None or n == base or n.startswith(f"{base}-")]


@mlflow_errors
def list_versions(name: str, data: Path | None = None) -> list[VersionInfo]:
    """Every version of model `name`, oldest first."""
    store = client(data)
    aliases = _model(store, name).aliases
    found = store.search_model_versions(f"name = '{name}'")
    return sorted((_version_info(store, v, aliases) for v in found), key=lambda v: v.version)


@mlflow_errors
def describe(name: str, version: int | str | None = None, data: Path | None = None) -> VersionInfo:
    """One version of `name`: a number, an alias, ``latest``, or None for the champion (else latest)."""
    store = client(data)
    aliases = _model(store, name).aliases
    selector = version if version is not None else CHAMPION if CHAMPION in aliases else "latest"
    return _version_info(store, _version(store, name, selector), aliases)


def parse_model_uri(uri: str) -> tuple[str, str]:
    """(name, version or alias) of ``models:/NAME/3``, ``models:/NAME@champion``, ``models:/NAME/latest``."""
    match = MODEL_URI.fullmatch(uri.strip())
    if not match:
        raise RegistryError(f"{uri!r} is not a model URI: use models:/NAME/VERSION or models:/NAME@ALIAS")
    return match[1], match[2] or match[3]


def load(uri: str | Path, build: Callable[[dict[str, Any]], nn.Module],
         data: Path | None = None) -> tuple[nn.Module, dict[str, Any]]:
    """(net in eval mode, its config) from ``models:/...``, another artifact URI, or a model directory."""
    text = str(uri)
    if not text.startswith("models:/") and "://" not in text:
        return _load_dir(text, Path(text), build)
    source = describe(*parse_model_uri(text), data=data).source if text.startswith("models:/") else text
    with tempfile.TemporaryDirectory(prefix="gozero-model-") as temp:
        return _load_dir(text, _download(text, source, Path(temp), data), build)


def _load_dir(uri: str, path: Path,
              build: Callable[[dict[str, Any]], nn.Module]) -> tuple[nn.Module, dict[str, Any]]:
    from storage.checkpoints import CheckpointError, load_model_checked

    try:
        return load_model_checked(uri, path, build)
    except CheckpointError as error:
        raise RegistryError(error.reason) from error


def local_copy(uri: str, data: Path | None = None) -> tuple[Path, str]:
    """(a local model directory, ``NAME/VERSION``) for ``models:/...``: the artifact directory itself
    when the store keeps artifacts on this file system, else a copy under the data dir's model cache
    (made once per version). Processes that load from it need no MLflow (self-play workers)."""
    info = describe(*parse_model_uri(uri), data=data)
    label = f"{info.name}/{info.version}"
    parsed = urllib.parse.urlparse(info.source)
    if parsed.scheme in ("", "file") and Path(urllib.parse.unquote(parsed.path)).is_dir():
        return Path(urllib.parse.unquote(parsed.path)), label
    cached = layout.model_cache_dir(data_dir(data), info.name, info.version, info.run.run_id if info.run else "")
    if not cached.is_dir():
        cached.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix=".download-", dir=cached.parent) as temp:
            try:
                os.replace(_download(uri, info.source, Path(temp), data), cached)  # whole, or not at all
            except OSError:
                if not cached.is_dir():  # else another process copied the same version first: use it
                    raise
    return cached, label


def _download(uri: str, source: str, temp: Path, data: Path | None) -> Path:
    """Copy the artifact directory `source` (what `uri` names) into `temp`; the local copy."""
    import mlflow.artifacts

    tracking = tracking_uri(data)
    client(data)  # an unreachable store is reported as such, before any download
    try:  # both URIs explicit: MLflow's defaults would create ./mlflow.db in the working directory
        local = mlflow.artifacts.download_artifacts(artifact_uri=source, dst_path=str(temp),
                                                    tracking_uri=tracking, registry_uri=tracking)
    except (MlflowException, OSError) as error:
        raise RegistryError(f"cannot download {uri} from {source}: {first_line(error)}") from error
    return Path(local)


def _model_names(store: MlflowClient) -> list[str]:
    names, token = [], None
    while True:
        page = store.search_registered_models("name LIKE 'gozero-%'", max_results=100, page_token=token)
        names += [m.name for m in page]
        if not (token := page.token):
            return sorted(names)


def _model(store: MlflowClient, name: str) -> Any:
    """The registered model `name`; RegistryError naming the known models if there is none."""
    if not _MODEL_NAME.match(name):  # also keeps quotes out of search filters
        raise RegistryError(f"{name!r} is not a model name (like {model_name(9)})")
    try:
        return store.get_registered_model(name)
    except MlflowException as error:
        if error.error_code != "RESOURCE_DOES_NOT_EXIST":
            raise
    known = ", ".join(_model_names(store)) or "none yet (train and register a model first)"
    raise RegistryError(f"no registered model {name!r} in {store.tracking_uri}; registered: {known} "
                        "(another data dir? --data-dir or $GOZERO_DATA)")


def _version(store: MlflowClient, name: str, selector: int | str) -> Any:
    """Version `selector` (number, alias or ``latest``) of `name`; RegistryError if there is none."""
    selector, aliases = str(selector), _model(store, name).aliases
    numbers = sorted(int(v.version) for v in store.search_model_versions(f"name = '{name}'"))
    if selector == "latest":
        if not numbers:
            raise RegistryError(f"{name} has no versions yet")
        selector = str(numbers[-1])
    elif not selector.isdigit() and selector not in aliases:
        hint = (f"no champion yet: promote a version (gozero models promote {name} VERSION --reason ...)"
                if selector == CHAMPION else f"aliases: {', '.join(sorted(aliases)) or 'none'}")
        raise RegistryError(f"{name} has no alias {selector!r}; {hint}")
    selector = str(aliases.get(selector, selector))
    if not selector.isdigit() or int(selector) not in numbers:
        listed = ", ".join(map(str, numbers)) or "none"
        raise RegistryError(f"{name} has no version {selector}; versions: {listed}")
    return store.get_model_version(name, selector)


def _version_info(store: MlflowClient, found: Any, aliases: Mapping[str, Any]) -> VersionInfo:
    """VersionInfo of a ModelVersion; aliases come from the model, as search results carry none."""
    try:
        run = run_summary(store, found.run_id) if found.run_id else None
    except MlflowException:  # the run was deleted; the version stands
        run = None
    return VersionInfo(name=found.name, version=int(found.version), tags=dict(found.tags),
                       aliases=tuple(sorted(a for a, v in aliases.items() if int(v) == int(found.version))),
                       created=datetime.fromtimestamp(found.creation_timestamp / 1000, UTC),
                       source=found.source, run=run)


def _logged_net_config(store: MlflowClient, run_id: str) -> dict[str, Any]:
    """The net config in the run's model/config.json; RegistryError if no model was logged."""
    from storage.checkpoints import CONFIG_FILE, CheckpointError, read_model_info

    with tempfile.TemporaryDirectory(prefix="gozero-register-") as temp:
        try:
            local = store.download_artifacts(run_id, f"{MODEL_ARTIFACT}/{CONFIG_FILE}", temp)
            config = read_model_info(Path(local).parent)["config"]
        except (MlflowException, OSError, CheckpointError) as error:
            raise RegistryError(f"run {run_id} has no loadable {MODEL_ARTIFACT}/ ({first_line(error)}); "
                                "log one with log_model first") from error
    if not isinstance(config, dict) or not isinstance(config.get("board_size"), int):
        raise RegistryError(f"run {run_id}: {MODEL_ARTIFACT}/{CONFIG_FILE} holds no net config with a board_size")
    return config
