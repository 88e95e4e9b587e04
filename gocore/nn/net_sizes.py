"""Net sizes: the presets by name (`PRESETS`: tiny, small, full, alphago) and any other size named
as KataGo names its nets (`net_size`: ``b<blocks>c<filters>[v<value hidden>]``); `gocore.nn.nets`
builds them for a board, encoder and family."""

from __future__ import annotations

import re
from dataclasses import dataclass

from gocore.errors import GozeroError


class NetConfigError(GozeroError, ValueError):
    """A network config with an unknown key, a missing key or an impossible value."""


@dataclass(frozen=True)
class NetSize:
    """A preset's trunk and head widths, independent of board size and encoder."""

    blocks: int  # residual blocks (dual) or 3x3 conv layers after the 5x5 one (policy, value)
    filters: int  # channels per trunk conv
    value_hidden: int  # value head hidden width
    schedule: str = "small"  # the training preset (gocore.nn.training.PRESETS) it trains with by default


# AlphaGo 2016 (Methods): policy = 5x5 conv, 11 3x3 convs, 1x1 conv with a bias per point (13 layers of
# k = 192; 128, 256, 384 also trained: b11c128, ...); value = the same 12 convs, 1x1 conv, FC 256, tanh.
TINY = NetSize(blocks=4, filters=32, value_hidden=64, schedule="tiny")  # tests and minutes-long CPU runs
SMALL = NetSize(blocks=6, filters=64, value_hidden=256)  # the 9x9 CPU workhorse
FULL = NetSize(blocks=10, filters=128, value_hidden=256, schedule="full")  # GPU runs
ALPHAGO = NetSize(blocks=11, filters=192, value_hidden=256, schedule="full")  # the paper's policy/value nets
PRESETS: dict[str, NetSize] = {"tiny": TINY, "small": SMALL, "full": FULL, "alphago": ALPHAGO}
_CUSTOM = re.compile(r"b(\d{1,3})c(\d{1,4})(?:v(\d{1,4}))?")


def net_size(name: str) -> NetSize:
    """The NetSize of preset `name`: a named one, or any size named as KataGo names its nets,
    ``b<blocks>c<filters>[v<value hidden>]`` (b6c96: 6 blocks of 96 filters, value hidden 256)."""
    if name in PRESETS:
        return PRESETS[name]
    custom = _CUSTOM.fullmatch(name)  # NetConfig refuses zero filters or value width
    if custom is None:
        raise NetConfigError(f"unknown preset {name!r}; presets: {', '.join(PRESETS)}, or a size such as b6c96 "
                             "(6 blocks of 96 filters) or b11c192v256 (and a value head of 256)")
    return NetSize(blocks=int(custom[1]), filters=int(custom[2]), value_hidden=int(custom[3] or 256))
