"""The convolution-path choices of this machine (`gocore.nn.conv_paths`), kept as one JSON file.

    {"<cpu model> | torch <version> | <net shape> | <threads> threads":
        {"path": "native", "rates": {"mkldnn": 395.0, "native": 554.0, "channels_last": 520.0}}}

A file that cannot be read as such (truncated, hand-edited, another format) is treated as empty
and replaced by the next choice written; writes are atomic, so two processes measuring at once
leave one complete file (the last writer's, holding its entries and those it read).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from storage import atomic


class JsonChoiceStore:
    """A `gocore.nn.conv_paths.ChoiceStore` in a JSON file (`storage.layout.conv_cache_path`)."""

    def __init__(self, path: Path):
        self.path = Path(path)

    def entries(self) -> dict[str, dict[str, Any]]:
        """Every stored choice by key; {} if the file is missing or unreadable."""
        try:
            data = json.loads(self.path.read_text())
        except (OSError, ValueError):
            return {}
        if not isinstance(data, dict):
            return {}
        return {key: entry for key, entry in data.items() if isinstance(entry, dict) and isinstance(entry.get("path"), str)}

    def get(self, key: str) -> str | None:
        """The path stored for `key`, or None."""
        entry = self.entries().get(key)
        return None if entry is None else entry["path"]

    def put(self, key: str, path: str, rates: dict[str, float]) -> None:
        """Store `path` and the measured rates for `key` beside the other readable entries."""
        entries = self.entries()
        entries[key] = {"path": path, "rates": {name: round(float(rate), 1) for name, rate in rates.items()}}
        atomic.write_json(self.path, entries, durable=False)  # lost on a power cut: measured again
