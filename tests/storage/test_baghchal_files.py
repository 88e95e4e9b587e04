"""Baghchal's files: self-play batches (rows, records, the sidecar last), match chunks, pictures."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from storage import baghchal as files


def _columns(rows: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    pi = rng.random((rows, 217)).astype(np.float32)
    return {"goats": rng.integers(0, 1 << 25, rows), "tigers": rng.integers(0, 1 << 25, rows),
            "placed": np.full(rows, 20, np.int8), "captured": np.zeros(rows, np.int8),
            "to_play": np.ones(rows, np.int8), "ply": np.arange(rows, dtype=np.int16),
            "pi": pi / pi.sum(axis=1, keepdims=True), "z": np.zeros(rows, np.int8),
            "game_id": np.array(["g0"] * rows, dtype=object), "symmetry": np.zeros(rows, np.int8),
            "generation": np.ones(rows, np.int32), "model_version": np.array(["m"] * rows, dtype=object)}


def test_a_batch_reads_back_once_its_sidecar_is_written(tmp_path: Path) -> None:
    columns = _columns(10)
    assert files.read_finished(tmp_path, "loop", 1, 7) is None
    files.write_batch(tmp_path, "loop", 1, 7, columns, {"g0": "1. G33# 1-0"}, {"games": 1, "rows": 10})
    assert files.read_finished(tmp_path, "loop", 1, 7)["rows"] == 10
    rows = files.read_rows(tmp_path, "loop", [1])
    assert np.array_equal(rows["goats"], columns["goats"]) and np.allclose(rows["pi"], columns["pi"], atol=1e-3)
    assert files.read_records(tmp_path, "loop", 1) == {"g0": "1. G33# 1-0"}
    files.rows_path(tmp_path, "loop", 1, 7).write_bytes(b"damaged")  # the rows lost after the sidecar
    assert files.read_finished(tmp_path, "loop", 1, 7) is None and files.finished_batches(tmp_path, "loop", 1) == {}


def test_match_chunks_and_the_ladder_round_trip(tmp_path: Path) -> None:
    row = {"game": 0, "goat": "a", "tiger": "b", "a_side": 1, "winner": 0, "a_score": 0.5, "reason": "repetition",
           "detail": "", "plies": 60, "seconds": 1.5, "opening": 2, "record": "1. G33"}
    files.write_match_info(tmp_path, "m", {"names": ["a", "b"]})
    files.write_games(tmp_path, "m", 0, [row, {**row, "game": 1, "a_side": -1, "goat": "b", "tiger": "a"}])
    assert [r["game"] for r in files.read_games(tmp_path, "m")] == [0, 1] and files.match_ids(tmp_path) == ["m"]
    files.write_ladder(tmp_path, [{"player": "a", "elo": 10.0}])
    assert files.read_ladder(tmp_path) == [{"player": "a", "elo": 10.0}]


def test_a_position_is_drawn_as_a_png(tmp_path: Path) -> None:
    board = np.zeros((5, 5), np.int8)
    board[0, 0] = board[4, 4] = -1
    board[2, 2] = 1
    path = files.plot_position(board, tmp_path / "p.png", "a title long enough to be wrapped " * 3)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
