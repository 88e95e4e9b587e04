"""MLflow: training runs, their artifacts and the model registry (the only module that imports mlflow).

Store: ``sqlite:///<data>/mlflow.db`` with artifacts in ``<data>/mlartifacts``, unless
``MLFLOW_TRACKING_URI`` is set. MLflow only ever sees absolute URIs (its defaults are relative to
the working directory), and every experiment gets an explicit ``artifact_location``: beside the
SQLite file (one store stays whole whichever data dir later processes use), or the server's choice
for an ``http(s)://`` tracking server. A file lock serialises first-time store creation.

    experiment  gozero-<N>x<N>            one per board size; a training task is one run
    run         params: the flattened config, dataset, code_version; tags: board_size, dataset,
                code_version; artifacts: config.json, model/ (a storage.checkpoints model dir),
                plots/curves.png
    model       gozero-<N>x<N>            AlphaGo Zero dual nets
                gozero-<N>x<N>-<family>   AlphaGo policy, value and rollout nets
    version     tags: family, board_size, generation, dataset, code_version; `promote` adds
                promotion_reason, promoted_at, previous_champion and the evidence (gate_win_rate,
                games, elo, ...), moves the alias `champion` and tags the old champion replaced_by

A registered model per family, because the alias `champion` belongs to a registered model and
AlphaGo needs a champion policy net and a champion value net at once. The name is for people:
`load` rebuilds the net from the config.json stored beside the weights (its `family` picks the
class) with the `build` the caller passes, e.g. ``gocore.nn.nets.build_net``: storage does not import
gocore. Models are plain artifacts registered by their artifact URI, never ``mlflow.pytorch``
(pickle, slow requirement inference); `load` downloads the directory and reads it through
`storage.checkpoints.load_model`, weights-only, so no code is ever unpickled.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
import logging
import os
import re
import subprocess
import tempfile
import threading
import time
import urllib.request
import warnings
from collections.abc import Callable, Iterator, Mapping
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

from filelock import FileLock
from mlflow import MlflowClient
from mlflow.entities import Metric, Param, RunStatus
from mlflow.exceptions import MlflowException

from gocore.errors import GozeroError
from storage.atomic import atomic_path
from storage.layout import data_dir

if TYPE_CHECKING:
    from torch import nn

# storage.checkpoints (and so torch) is imported where models are read: listing, showing and
# promoting need neither, and `gozero models list` starts seconds sooner without them.
CHAMPION = "champion"
MODEL_ARTIFACT = "model"
CONFIG_ARTIFACT = "config.json"
CURVES_ARTIFACT = "plots/curves.png"
KEY_METRICS = ("gate_win_rate", "games", "elo", "val_policy_accuracy", "val_accuracy", "val_value_mse")
RESERVED_TAGS = frozenset({"family", "board_size", "generation", "dataset", "code_version",
                           "promotion_reason", "promoted_at", "previous_champion", "replaced_by"})
_PARAMS_PER_CALL, _PARAM_MAX = 100, 6000  # MLflow's limits
_MODEL_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,250}$")
_CLIENTS: dict[str, MlflowClient] = {}
_CLIENTS_LOCK = threading.Lock()


class RegistryError(GozeroError):
    """A tracking or registry request that cannot be served; the message says what to do."""


@dataclasses.dataclass(frozen=True)
class RunSummary:
    """One training run: status (RUNNING, FINISHED, FAILED, KILLED), params, latest metrics, tags."""

    run_id: str
    status: str
    params: dict[str, str]
    metrics: dict[str, float]
    tags: dict[str, str]
    artifact_uri: str


@dataclasses.dataclass(frozen=True)
class VersionInfo:
    """One registered model version: its aliases, tags, source and the run that logged it."""

    name: str
    version: int
    aliases: tuple[str, ...]
    tags: dict[str, str]
    created: datetime
    """Registration time, UTC."""
    source: str
    """Artifact URI of the model directory."""
    run: RunSummary | None
    """None if the run was deleted."""

    @property
    def uri(self) -> str:
        """``models:/<name>/<version>``."""
        return f"models:/{self.name}/{self.version}"

    def key_metrics(self) -> dict[str, str]:
        """The KEY_METRICS found in the version's tags, else in its run's metrics."""
        metrics = self.run.metrics if self.run else {}
        found = {k: self.tags[k] for k in KEY_METRICS if k in self.tags}
        return found | {k: f"{metrics[k]:.4g}" for k in KEY_METRICS if k in metrics and k not in found}


def _mlflow_errors(function: Callable) -> Callable:
    """Turn an exception MLflow raises into a RegistryError with its first line."""
    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return function(*args, **kwargs)
        except MlflowException as error:
            raise RegistryError(f"MLflow refused: {_first_line(error)}") from error
    return wrapper


# ---------------------------------------------------------------- names and store

def experiment_name(board_size: int) -> str:
    """The experiment of every training run on this board size, e.g. ``gozero-9x9``."""
    return f"gozero-{int(board_size)}x{int(board_size)}"


def model_name(board_size: int, family: str = "dual") -> str:
    """Registered model of a board size and net family: ``gozero-9x9``, ``gozero-9x9-policy``."""
    return experiment_name(board_size) + ("" if family == "dual" else f"-{family}")


@functools.lru_cache(maxsize=1)
def code_version() -> str:
    """``git:<commit>[-dirty]`` of the checkout gozero runs from, else ``gozero==<version>``."""
    root = Path(__file__).resolve().parents[1]
    if (root / ".git").exists() and (root / "pyproject.toml").exists():  # not some enclosing repo
        commit = _git(root, "rev-parse", "HEAD")
        if commit:  # --no-optional-locks: reading the status must not rewrite the index
            dirty = _git(root, "--no-optional-locks", "status", "--porcelain", "--untracked-files=no")
            return f"git:{commit}{'-dirty' if dirty else ''}"
    try:
        return f"gozero=={metadata.version('gozero')}"
    except metadata.PackageNotFoundError:
        return "unknown"


def tracking_uri(data: Path | None = None) -> str:
    """$MLFLOW_TRACKING_URI (a relative SQLite path made absolute), else ``<data>/mlflow.db``."""
    configured = os.environ.get("MLFLOW_TRACKING_URI")
    if not configured:
        return f"sqlite:///{data_dir(data) / 'mlflow.db'}"
    path = _sqlite_path(configured)
    query = configured.partition("?")[1] + configured.partition("?")[2]
    return configured if path is None else f"sqlite:///{path}{query}"


def artifact_root(uri: str, data: Path | None = None) -> str | None:
    """Where new experiments keep artifacts: beside a SQLite store, the server's choice, or <data>."""
    db = _sqlite_path(uri)
    if db is not None:
        return (db.parent / "mlartifacts").as_uri()
    if uri.startswith(("http://", "https://", "databricks")):
        return None
    return (data_dir(data) / "mlartifacts").as_uri()


def client(data: Path | None = None) -> MlflowClient:
    """This process's MLflow client for the tracking URI; the store is created on first use."""
    uri = tracking_uri(data)
    with _CLIENTS_LOCK:
        if uri not in _CLIENTS:
            _CLIENTS[uri] = _open_store(uri)
        return _CLIENTS[uri]


def _open_store(uri: str) -> MlflowClient:
    """Open the store at `uri`, creating it if needed; RegistryError if it cannot be used."""
    logging.getLogger("mlflow").setLevel(logging.WARNING)  # table creation logs at INFO
    os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")  # often offline; never phone home
    if uri.startswith(("http://", "https://")):
        _check_server(uri)
    db = _sqlite_path(uri)
    try:
        if db:
            db.parent.mkdir(parents=True, exist_ok=True)
        # Creating the tables takes seconds and fails when processes race: one at a time.
        with FileLock(f"{db}.lock", timeout=300) if db else contextlib.nullcontext():
            with warnings.catch_warnings():  # MLflow's own use of deprecated SQLAlchemy API
                warnings.simplefilter("ignore", DeprecationWarning)
                opened = MlflowClient(tracking_uri=uri, registry_uri=uri)
                opened.search_experiments(max_results=1)
                opened.search_registered_models(max_results=1)
    except Exception as error:  # sqlalchemy, OS and MLflow errors all mean "cannot use this store"
        hint = ("fix or unset MLFLOW_TRACKING_URI (unset, the store lives in the data dir)"
                if os.environ.get("MLFLOW_TRACKING_URI") else "check the data dir (--data-dir, $GOZERO_DATA)")
        raise RegistryError(f"MLflow store {uri} is unreachable: {_first_line(error)}; {hint}") from error
    return opened


def _check_server(uri: str) -> None:
    """Fail in seconds, not after MLflow's minutes of retries, when a tracking server is down."""
    try:
        with urllib.request.urlopen(f"{uri.rstrip('/')}/health", timeout=5):
            pass
    except OSError as error:
        raise RegistryError(f"MLflow server {uri} is unreachable ({error}); start it, or unset "
                            "MLFLOW_TRACKING_URI to use the embedded store in the data dir") from None


def _sqlite_path(uri: str) -> Path | None:
    """The absolute file of a ``sqlite:///`` URI (relative paths from the cwd), else None."""
    if not uri.startswith("sqlite:///"):
        return None
    path = uri[len("sqlite:///"):].partition("?")[0]
    return None if path in ("", ":memory:") else Path(path).expanduser().resolve()


# ---------------------------------------------------------------- runs

@_mlflow_errors
def start_run(board_size: int, config: Mapping[str, Any], *, dataset: str | None = None,
              run_name: str | None = None, data: Path | None = None) -> str:
    """Start a run in the board size's experiment, logging the config as params and JSON; its id."""
    store = client(data)
    facts = {"code_version": code_version(), **({"dataset": dataset} if dataset is not None else {})}
    run = store.create_run(_experiment_id(store, board_size, data), run_name=run_name,
                            tags={"board_size": str(board_size), **facts})
    params = [Param(k, v) for k, v in {**flatten_config(config), **facts}.items()]
    for start in range(0, len(params), _PARAMS_PER_CALL):
        store.log_batch(run.info.run_id, params=params[start:start + _PARAMS_PER_CALL])
    with tempfile.TemporaryDirectory(prefix="gozero-run-") as temp:
        (Path(temp) / CONFIG_ARTIFACT).write_text(_json(config, indent=2))
        store.log_artifact(run.info.run_id, str(Path(temp) / CONFIG_ARTIFACT))
    return run.info.run_id


@_mlflow_errors
def end_run(run_id: str, status: str = "FINISHED", data: Path | None = None) -> None:
    """Mark the run FINISHED (or FAILED, KILLED)."""
    client(data).set_terminated(run_id, status=RunStatus.to_string(RunStatus.from_string(status)))


@contextlib.contextmanager
def training_run(board_size: int, config: Mapping[str, Any], *, dataset: str | None = None,
                 run_name: str | None = None, data: Path | None = None) -> Iterator[str]:
    """`start_run` for a block: FINISHED when it completes, FAILED (KILLED if interrupted) if it raises."""
    run_id = start_run(board_size, config, dataset=dataset, run_name=run_name, data=data)
    try:
        yield run_id
    except Exception:
        end_run(run_id, "FAILED", data)
        raise
    except BaseException:  # KeyboardInterrupt, SystemExit
        end_run(run_id, "KILLED", data)
        raise
    end_run(run_id, "FINISHED", data)


@_mlflow_errors
def log_metrics(run_id: str, metrics: Mapping[str, float], step: int, data: Path | None = None) -> None:
    """Log one step's metrics in a single call."""
    now = int(time.time() * 1000)
    client(data).log_batch(run_id, metrics=[Metric(k, float(v), now, int(step)) for k, v in metrics.items()])


@_mlflow_errors
def log_curves(run_id: str, history: Mapping[str, list[tuple[int, float]]], data: Path | None = None) -> None:
    """Draw `history` with `plot_curves` and log it as the run's plots/curves.png."""
    with tempfile.TemporaryDirectory(prefix="gozero-plot-") as temp:
        png = plot_curves(history, Path(temp) / Path(CURVES_ARTIFACT).name)
        client(data).log_artifact(run_id, str(png), str(Path(CURVES_ARTIFACT).parent))


@_mlflow_errors
def log_model(run_id: str, model_dir: Path, data: Path | None = None) -> str:
    """Log a model directory (`storage.checkpoints.save_model`) as the run's model/; its artifact URI."""
    from storage.checkpoints import read_model_info

    read_model_info(Path(model_dir))  # refuse now what could never be registered and loaded
    store = client(data)
    store.log_artifacts(run_id, str(model_dir), MODEL_ARTIFACT)
    return f"{store.get_run(run_id).info.artifact_uri}/{MODEL_ARTIFACT}"


@_mlflow_errors
def describe_run(run_id: str, data: Path | None = None) -> RunSummary:
    """The run's status, params, latest metrics, tags and artifact URI."""
    return _run_summary(client(data), run_id)


def plot_curves(history: Mapping[str, list[tuple[int, float]]], path: Path) -> Path:
    """Draw each metric's (step, value) points in a panel of its own into the PNG `path`; returns it."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    names = sorted(history) or ["(no metrics)"]
    columns = min(len(names), 2)
    rows = -(-len(names) // columns)
    figure = Figure(figsize=(5 * columns, 2.6 * rows), layout="constrained")
    FigureCanvasAgg(figure)  # Agg without pyplot: no global backend state, safe in worker threads
    for index, name in enumerate(names):
        points = sorted(history.get(name, []))
        axes = figure.add_subplot(rows, columns, index + 1, title=name, xlabel="step")
        axes.plot([s for s, _ in points], [v for _, v in points], marker="." if len(points) < 30 else None)
        axes.xaxis.set_major_locator(MaxNLocator(integer=True))
        axes.grid(alpha=0.3)
    with atomic_path(Path(path)) as temp:
        figure.savefig(temp, format="png", dpi=100)
    return Path(path)


def flatten_config(config: Mapping[str, Any], prefix: str = "") -> dict[str, str]:
    """A nested config as MLflow params: dotted keys (``net.blocks``), values as strings."""
    flat: dict[str, str] = {}
    for key, value in config.items():
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            value = dataclasses.asdict(value)
        if isinstance(value, Mapping) and value:
            flat.update(flatten_config(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = (value if isinstance(value, str) else _json(value))[:_PARAM_MAX]
    return flat


def _experiment_id(store: MlflowClient, board_size: int, data: Path | None) -> str:
    """The board size's experiment, created with an absolute artifact location if missing."""
    name = experiment_name(board_size)
    if (experiment := store.get_experiment_by_name(name)) is not None:
        return experiment.experiment_id
    root = artifact_root(tracking_uri(data), data)
    try:
        return store.create_experiment(name, artifact_location=root and f"{root}/{name}")
    except MlflowException:  # another process created it in between
        if (experiment := store.get_experiment_by_name(name)) is None:
            raise
        return experiment.experiment_id


def _run_summary(store: MlflowClient, run_id: str) -> RunSummary:
    run = store.get_run(run_id)
    return RunSummary(run_id=run.info.run_id, status=run.info.status, params=dict(run.data.params),
                      metrics=dict(run.data.metrics), artifact_uri=run.info.artifact_uri,
                      tags={k: v for k, v in run.data.tags.items() if not k.startswith("mlflow.")})


# ---------------------------------------------------------------- registry

@_mlflow_errors
def register(run_id: str, *, generation: int | None = None, dataset: str | None = None,
             tags: Mapping[str, str] | None = None, data: Path | None = None) -> int:
    """Register the run's model/ as a version of `model_name(board size, family)`; the version number."""
    store = client(data)
    run, net = store.get_run(run_id), _logged_net_config(store, run_id)
    family, name = net.get("family", "dual"), model_name(net["board_size"], net.get("family", "dual"))
    with contextlib.suppress(MlflowException):  # it exists (perhaps a racing process made it)
        store.create_registered_model(name)
    if done := store.search_model_versions(f"name = '{name}' and run_id = '{run_id}'"):
        return int(done[0].version)  # a retried task must not register the same run twice
    dataset = dataset if dataset is not None else run.data.params.get("dataset")
    facts = {"generation": generation, "dataset": dataset}
    version_tags = {**(tags or {}), "family": family, "board_size": str(net["board_size"]),
                    "code_version": run.data.tags.get("code_version", code_version()),
                    **{k: str(v) for k, v in facts.items() if v is not None}}
    created = store.create_model_version(name, source=f"{run.info.artifact_uri}/{MODEL_ARTIFACT}",
                                          run_id=run_id, tags=version_tags)
    return int(created.version)


@_mlflow_errors
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


@_mlflow_errors
def list_models(board_size: int | None = None, data: Path | None = None) -> list[str]:
    """Names of the registered gozero models (of one board size if given), sorted."""
    names = _model_names(client(data))
    base = model_name(board_size) if board_size is not None else None
    return [n for n in names if base is None or n == base or n.startswith(f"{base}-")]


@_mlflow_errors
def list_versions(name: str, data: Path | None = None) -> list[VersionInfo]:
    """Every version of model `name`, oldest first."""
    store = client(data)
    aliases = _model(store, name).aliases
    found = store.search_model_versions(f"name = '{name}'")
    return sorted((_version_info(store, v, aliases) for v in found), key=lambda v: v.version)


@_mlflow_errors
def describe(name: str, version: int | str | None = None, data: Path | None = None) -> VersionInfo:
    """One version of `name`: a number, an alias, ``latest``, or None for the champion (else latest)."""
    store = client(data)
    aliases = _model(store, name).aliases
    selector = version if version is not None else CHAMPION if CHAMPION in aliases else "latest"
    return _version_info(store, _version(store, name, selector), aliases)


def parse_model_uri(uri: str) -> tuple[str, str]:
    """(name, version or alias) of ``models:/NAME/3``, ``models:/NAME@champion``, ``models:/NAME/latest``."""
    match = re.fullmatch(r"models:/+([^/@]+)(?:@([^/]+)|/([^/]+))", uri.strip())
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
    """load_model, with every refusal (unsafe pickle, damage, unbuildable config) one RegistryError."""
    from storage.checkpoints import CheckpointError, load_model

    try:
        return load_model(path, build)
    except CheckpointError as error:
        where = "" if error.path == path else f"{error.path.name}: "  # a temp dir's path means nothing
        raise RegistryError(f"cannot load {uri}: {where}{error.reason}") from error
    except (ValueError, KeyError, TypeError) as error:  # `build` refusing the stored config
        raise RegistryError(f"cannot load {uri}: its config builds no net ({error})") from error


def _download(uri: str, source: str, temp: Path, data: Path | None) -> Path:
    """Copy the artifact directory `source` (what `uri` names) into `temp`; the local copy."""
    import mlflow.artifacts

    tracking = tracking_uri(data)
    client(data)  # an unreachable store is reported as such, before any download
    try:  # both URIs explicit: MLflow's defaults would create ./mlflow.db in the working directory
        local = mlflow.artifacts.download_artifacts(artifact_uri=source, dst_path=str(temp),
                                                    tracking_uri=tracking, registry_uri=tracking)
    except (MlflowException, OSError) as error:
        raise RegistryError(f"cannot download {uri} from {source}: {_first_line(error)}") from error
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
    raise RegistryError(f"no registered model {name!r}; registered: {known}")


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
        run = _run_summary(store, found.run_id) if found.run_id else None
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
            raise RegistryError(f"run {run_id} has no loadable {MODEL_ARTIFACT}/ ({_first_line(error)}); "
                                "log one with log_model first") from error
    if not isinstance(config, dict) or not isinstance(config.get("board_size"), int):
        raise RegistryError(f"run {run_id}: {MODEL_ARTIFACT}/{CONFIG_FILE} holds no net config with a board_size")
    return config


def _git(root: Path, *args: str) -> str:
    try:
        done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return ""
    return done.stdout.strip() if done.returncode == 0 else ""


def _json(value: Any, indent: int | None = None) -> str:
    """JSON of a config; dataclasses as dicts, anything else unknown (paths, enums) as a string."""
    def plain(item: Any) -> Any:
        return dataclasses.asdict(item) if dataclasses.is_dataclass(item) else str(item)
    return json.dumps(value, indent=indent, sort_keys=True, default=plain)


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__
