"""GTP while the engine is not there yet: a net loads in seconds (tens on a slow disk), and GUIs
ask ``name`` and ``protocol_version`` at once, some with a short timeout.

`load_answering` runs the loading in a thread and meanwhile answers those two commands from the
input already read; the first other line (or the end of input) is put back for the engine, so
answers keep the order of the commands.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TextIO, TypeVar

from gocore.play.gtp_analysis import LineReader
from gocore.play.gtp_protocol import PROTOCOL_VERSION, format_response, preprocess

T = TypeVar("T")
POLL_SECONDS = 0.05


def early_answer(line: str, name: str) -> str | None:
    """The response to `line` if it can be given without the engine (name, protocol_version,
    an empty line: nothing to answer), else None."""
    words = preprocess(line).split()
    if not words:
        return ""
    command_id = words.pop(0) if words[0].isascii() and words[0].isdigit() else ""
    answers = {"name": name, "protocol_version": PROTOCOL_VERSION}
    if len(words) != 1 or words[0] not in answers:
        return None
    return format_response("=", command_id, answers[words[0]])


def load_answering(load: Callable[[], T], lines: LineReader, stdout: TextIO, name: str) -> T:
    """`load()`'s result (or its exception, raised here), answering `early_answer` commands from
    `lines` on `stdout` until it is done or another command comes."""
    outcome: dict[str, object] = {}

    def run() -> None:
        try:
            outcome["value"] = load()
        except BaseException as error:  # noqa: BLE001 - re-raised in the caller's thread
            outcome["error"] = error

    loader = threading.Thread(target=run, daemon=True, name="gtp-load")
    loader.start()
    while loader.is_alive():
        if not lines.has_input(POLL_SECONDS):
            continue
        line = lines.next_line()
        answer = None if line is None else early_answer(line, name)
        if answer is None:
            lines.push_front(line)
            break
        if answer:
            stdout.write(answer)
            stdout.flush()
    loader.join()
    if "error" in outcome:
        raise outcome["error"]  # type: ignore[misc]
    return outcome["value"]  # type: ignore[return-value]
