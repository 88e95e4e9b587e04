"""Run locks: one holder at a time, and a note that names it (pid, details) to whoever is refused."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from storage import locks


def test_the_holder_note_carries_details_while_held_and_a_second_holder_is_refused(tmp_path: Path) -> None:
    lock = tmp_path / "run" / "x.lock"
    with locks.exclusive(lock, "the x run", {"url": "http://127.0.0.1:1"}):
        note = locks.holder(lock)
        assert note is not None and note["pid"] == os.getpid() and note["url"] == "http://127.0.0.1:1"
        with pytest.raises(locks.BusyError, match=f"the x run is in use by another run \\(pid {os.getpid()}"):
            with locks.exclusive(lock, "the x run"):
                pass
    assert locks.holder(lock) is None
    with locks.exclusive(lock, "the x run"):  # released: the next run gets it
        assert "url" not in locks.holder(lock)
