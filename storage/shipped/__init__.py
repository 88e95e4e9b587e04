"""The nets that ship with gozero: a trained 9x9 champion in the repository, registered in a data
dir the first time a command names it, so that a fresh install plays, analyses and reviews with a
GNU Go-beating net before any training.

    spec = prepared("shipped", data)          # registers it once: "models:/gozero-9x9-shipped@champion"
    provenance(9)                             # how it was made: command, data, CPU hours, GNU Go results

Each shipped net is a model directory (`storage.checkpoints.save_model`) in ``storage/shipped/
gozero-<N>x<N>/`` with ``provenance.json``. Its registered versions carry the weights' hash
(``weights_sha256``): a data dir registers each shipped build once, whatever runs it first, and a
replaced net (a stronger one committed later) becomes the next version and the champion.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from filelock import FileLock

from storage import layout

SHORTHAND = "shipped"
"""The player and model spec that names the shipped 9x9 net (``shipped-<N>x<N>`` another size's)."""
PROVENANCE_FILE = "provenance.json"
_HERE = Path(__file__).resolve().parent


def shipped_name(size: int) -> str:
    """The registered model name of the shipped net of `size`."""
    return f"gozero-{size}x{size}-shipped"


def shipped_dir(size: int, folder: Path | None = None) -> Path:
    """The model directory of the shipped net of `size` (it may not exist: no net of that size
    ships), in `folder` (default: the shipped nets' folder of this package)."""
    return (folder or _HERE) / f"gozero-{size}x{size}"


def ship(source: Path, size: int, facts: dict[str, Any], folder: Path | None = None) -> Path:
    """Make the model directory `source` the shipped net of `size` with `facts` as its provenance,
    replacing the one before (built beside it, then renamed into place); its directory."""
    import shutil

    from storage.atomic import write_json

    target = shipped_dir(size, folder)
    staging = target.with_name(f".{target.name}.new")
    shutil.rmtree(staging, ignore_errors=True)
    shutil.copytree(source, staging)
    write_json(staging / PROVENANCE_FILE, facts)
    shutil.rmtree(target, ignore_errors=True)
    staging.rename(target)
    return target


def shipped_sizes() -> list[int]:
    """The board sizes a net ships for."""
    return sorted(int(path.name.split("x")[-1]) for path in _HERE.glob("gozero-*x*") if (path / "config.json").is_file())


def provenance(size: int) -> dict[str, Any]:
    """What the shipped net of `size` is and how it was made (its provenance.json)."""
    return json.loads((shipped_dir(size) / PROVENANCE_FILE).read_text())


def shorthand_size(spec: str) -> int | None:
    """The board size a shipped-net spec names: ``shipped`` 9, ``shipped-13x13`` 13, a
    ``models:/gozero-NxN-shipped...`` URI N; None for any other spec."""
    import re

    text = spec.strip()
    if text == SHORTHAND:
        return 9
    match = re.fullmatch(r"shipped-(\d+)x\1|models:/+gozero-(\d+)x\2-shipped(?:@[^/]+|/\d+)?", text)
    return None if match is None else int(match[1] or match[2])


def prepared(spec: str, data: Path | None = None) -> str:
    """`spec`, with a shipped-net spec registered in the data dir's registry if it is not yet and
    made a ``models:/`` URI (the shorthand becomes its ``@champion``); any other spec unchanged.
    RegistryError (a ShippedNetError) when no net of that size ships."""
    size = shorthand_size(spec)
    if size is None:
        return spec
    ensure_registered(size, data)
    return spec if spec.startswith("models:/") else f"models:/{shipped_name(size)}@champion"


def ensure_registered(size: int, data: Path | None = None) -> int:
    """The registered version holding the shipped net of `size` (registered and made the champion
    now if this data dir has no version of these weights yet: once, whichever process comes first)."""
    from storage import registry, runs
    from storage.checkpoints import read_model_info
    from storage.mlflow_store import RegistryError

    directory = shipped_dir(size)
    if not (directory / "config.json").is_file():
        sizes = ", ".join(f"{n}x{n}" for n in shipped_sizes()) or "none"
        raise RegistryError(f"no {size}x{size} net ships with gozero (shipped: {sizes})")
    info = read_model_info(directory)
    weights, name = info["weights_sha256"], shipped_name(size)
    root = layout.data_dir(data)
    lock = root / "models" / f"{name}.lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(lock), timeout=300):  # a second first use (two engines a GUI starts) waits, then finds it
        for version in registry.list_versions(name, root) if name in registry.list_models(size, root) else []:
            if version.tags.get("weights_sha256") == weights:
                return version.version
        facts = provenance(size)
        run_id = runs.start_run(size, info["config"], run_name=name, data=root)
        runs.log_model(run_id, directory, root)
        runs.log_artifact(run_id, directory / PROVENANCE_FILE, "shipped", root)
        runs.end_run(run_id, data=root)
        tags = {"weights_sha256": weights, "shipped": "true", "strength": str(facts.get("strength", "")),
                "provenance_command": str(facts.get("command", ""))[:5000]}
        version = registry.register(run_id, name=name, tags=tags, data=root,
                                    dataset=facts.get("dataset"), dataset_key=facts.get("dataset_key"))
        registry.promote(name, version, "the net that ships with gozero", data=root)
        return version
