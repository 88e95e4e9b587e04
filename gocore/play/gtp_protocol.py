"""GTP v2 text, engine side: line preprocessing, argument parsing, responses and refusals.

`GtpEngine.handle` (in `gocore.play.gtp`) runs each input line through `preprocess`, answers with
`format_response`, and turns a `GtpFailure` raised by `expect_args`, `parse_number` or
`parse_color` into a ``?`` response. Start reading at `preprocess`. The client side is `gocore.play.gtp_client`.
"""

from __future__ import annotations

import math
import re

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")  # control characters other than HT and LF
_COLORS = {"b": 1, "black": 1, "w": -1, "white": -1}

PROTOCOL_VERSION = "2"  # GTP v2


class GtpFailure(Exception):
    """A refused command; the message is what follows ``?`` in the response."""



def preprocess(line: str) -> str:
    """A command line as GTP prescribes: control characters and ``#`` comments gone, tabs as spaces."""
    return _CONTROL.sub("", line).split("#", 1)[0].replace("\t", " ").strip()


def parse_color(text: str) -> int:
    """+1 or -1 for a GTP colour (``b``, ``black``, ``w``, ``white``, any case)."""
    color = _COLORS.get(text.lower())
    if color is None:
        raise GtpFailure(f"syntax error: invalid color {text!r}")
    return color


def expect_args(args: list[str], count: int, usage: str) -> list[str]:
    """The first `count` arguments; a syntax error naming the usage if there are fewer."""
    if len(args) < count:
        raise GtpFailure(f"syntax error: usage: {usage}")
    return args[:count]


def parse_number(text: str, what: str, integer: bool = False, signed: bool = False) -> float:
    """A finite number (an int if `integer`, non-negative unless `signed`) for argument `what`."""
    try:
        value = int(text) if integer else float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or (value < 0 and not signed):
        kind = ("an integer" if integer else "a number") if signed else \
            ("a non-negative integer" if integer else "a non-negative number")
        raise GtpFailure(f"syntax error: {what} must be {kind}, not {text!r}")
    return value


def format_response(status: str, command_id: str, text: str) -> str:
    """A response and its closing blank line; blank lines inside would end it early, so they go."""
    first, *rest = text.split("\n")
    lines = [f"{status}{command_id} {first.rstrip()}"] + [line.rstrip() for line in rest if line.strip()]
    return "\n".join(lines) + "\n\n"
