"""Atomic writes: complete files only under the final name, durable by fsync."""

from __future__ import annotations

import os

import pytest

from storage import atomic


def fsynced(monkeypatch) -> list[bool]:
    """Record each fsync as True for a directory, False for a file."""
    calls: list[bool] = []
    real = os.fsync

    def spy(fd: int) -> None:
        calls.append(os.path.isdir(f"/proc/self/fd/{fd}"))
        real(fd)

    monkeypatch.setattr(atomic.os, "fsync", spy)
    return calls


def test_the_file_and_then_its_directory_are_fsynced(tmp_path, monkeypatch):
    calls = fsynced(monkeypatch)
    atomic.write_bytes(tmp_path / "a.bin", b"data")
    assert calls == [False, True]
    assert (tmp_path / "a.bin").read_bytes() == b"data"


def test_sync_dir_false_fsyncs_the_file_only(tmp_path, monkeypatch):
    calls = fsynced(monkeypatch)
    with atomic.atomic_path(tmp_path / "a.bin", sync_dir=False) as temp:
        temp.write_bytes(b"data")
    assert calls == [False]
    assert (tmp_path / "a.bin").read_bytes() == b"data"


def test_a_failed_write_leaves_neither_the_file_nor_a_temp(tmp_path):
    with pytest.raises(RuntimeError), atomic.atomic_path(tmp_path / "a.bin") as temp:
        temp.write_bytes(b"half")
        raise RuntimeError("crash")
    assert list(tmp_path.iterdir()) == []


def test_writeback_file_writes_everything_and_starts_writeback_chunk_by_chunk(tmp_path, monkeypatch):
    started: list[tuple[int, int]] = []
    monkeypatch.setattr(atomic, "_start_writeback", lambda fd, offset, length: started.append((offset, length)))
    data = bytes(range(256)) * 40  # 10,240 bytes
    with atomic.WritebackFile(tmp_path / "a.bin", chunk=4096) as sink:
        for start in range(0, len(data), 1000):
            sink.write(data[start:start + 1000])
    assert (tmp_path / "a.bin").read_bytes() == data
    assert started == [(0, 5000), (5000, 5000)]  # every >= 4096 new bytes; the tail is left to fsync


def test_writeback_hint_on_this_platform_does_not_fail(tmp_path):
    with atomic.WritebackFile(tmp_path / "a.bin", chunk=1) as sink:
        sink.write(b"x" * 10)
    assert (tmp_path / "a.bin").read_bytes() == b"x" * 10
