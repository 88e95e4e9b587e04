"""storage.run_dirs: a training run's directory files, read back as written, and readers that never fail."""

from __future__ import annotations

from pathlib import Path

from storage import run_dirs


def test_progress_reads_what_the_last_report_wrote_and_zero_before(tmp_path: Path) -> None:
    assert run_dirs.read_progress(tmp_path) == (0, 0)
    tmp_path.mkdir(exist_ok=True)
    run_dirs.write_progress(tmp_path, 10, 30, "r1")
    run_dirs.write_progress(tmp_path, 20, 30, "r1")
    assert run_dirs.read_progress(tmp_path) == (20, 30)
    (tmp_path / run_dirs.PROGRESS_FILE).write_text('{"step": 2')  # cut short: the bar waits a poll
    assert run_dirs.read_progress(tmp_path) == (0, 0)


def test_history_is_cut_at_the_resumed_step(tmp_path: Path) -> None:
    run_dirs.write_history(tmp_path, {"loss": [(5, 1.0), (10, 0.5), (15, 0.25)], "top1": [(10, 0.1)]})
    assert run_dirs.read_history(tmp_path, 10) == {"loss": [(5, 1.0), (10, 0.5)], "top1": [(10, 0.1)]}
    assert run_dirs.read_history(tmp_path, 0) == {}
    assert run_dirs.read_history(tmp_path / "none", 10) == {}


def test_identity_and_result_round_trip_and_read_none_when_missing(tmp_path: Path) -> None:
    directory = tmp_path / "run"
    assert run_dirs.read_identity(directory) is None and run_dirs.read_result(directory) is None
    run_dirs.write_identity(directory, {"dataset": "d", "net": {"blocks": 2}})
    run_dirs.write_result(directory, {"step": 3})
    assert run_dirs.read_identity(directory) == {"dataset": "d", "net": {"blocks": 2}}
    assert run_dirs.read_result(directory) == {"step": 3}


def test_pruning_keeps_the_newest_checkpoints(tmp_path: Path) -> None:
    for step in (5, 10, 100, 20):
        run_dirs.checkpoint_path(tmp_path, step).write_bytes(b"x")
    run_dirs.prune_checkpoints(tmp_path, 2)
    assert [p.name for p in run_dirs.checkpoint_files(tmp_path)] == ["step-00000020.pt", "step-00000100.pt"]
