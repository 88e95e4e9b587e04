"""Promotion: the one way every task moves a model's ``champion`` alias.

    promote("gozero-9x9", 7, "won 58 % of 400 gate games", evidence)   # the alias moves, an event says so

storage.registry moves the alias, then a Prefect event ``gozero.model.promoted`` announces it
(prefect.yaml's `ladder` deployment is triggered by it).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from storage.registry import VersionInfo

PROMOTED_EVENT = "gozero.model.promoted"
INITIAL = "initial"  # the promotion reason of a zero loop's generation 0, a random net


def promote(name: str, version: int, reason: str, evidence: Mapping[str, Any] | None = None,
            data_dir: str | Path | None = None) -> int | None:
    """`storage.registry.promote` (returns the champion it replaced, or `version` if it already was
    the champion), then `announce_promotion` of the version."""
    from storage import registry

    data = None if data_dir is None else Path(data_dir)
    previous = registry.promote(name, version, reason, evidence, data)
    announce_promotion(registry.describe(name, version, data))
    return previous


def announce_promotion(info: VersionInfo) -> dict[str, Any] | None:
    """Emit `PROMOTED_EVENT` for a champion version. Its resource is ``gozero.model.<name>``,
    labelled with the family, board size, version and whether it is a loop's random generation 0
    (reason `INITIAL`: prefect.yaml rates only promotions won by evidence); its payload names the model, version, board
    size, loop, generation, reason and the pinned ``models:/NAME/VERSION``. The event id comes from
    the version and its ``promoted_at`` tag, so a retried task announces the same promotion under
    the same id and the Prefect server drops the repeat. Nothing is sent without a Prefect API
    (PREFECT_API_URL): a bare CLI would start a temporary server for it. Returns the payload sent."""
    from prefect.events import emit_event
    from prefect.settings import PREFECT_API_URL

    if not PREFECT_API_URL.value():
        return None
    tags = info.tags
    generation = tags.get("generation", "")
    payload = {"name": info.name, "version": info.version, "uri": info.uri, "size": int(tags.get("board_size", 0)),
               "family": tags.get("family", ""), "loop": tags.get("loop"),
               "generation": int(generation) if generation.isdigit() else None,
               "reason": tags.get("promotion_reason", ""), "previous": tags.get("previous_champion", "none")}
    resource = {"prefect.resource.id": f"gozero.model.{info.name}", "prefect.resource.name": info.name,
                "gozero.family": payload["family"], "gozero.size": str(payload["size"]),
                "gozero.version": str(info.version), "gozero.initial": str(payload["reason"] == INITIAL).lower()}
    key = f"{PROMOTED_EVENT}/{info.name}/{info.version}/{tags.get('promoted_at', '')}"
    emit_event(PROMOTED_EVENT, resource, payload=payload, id=uuid.uuid5(uuid.NAMESPACE_URL, key))
    return payload
