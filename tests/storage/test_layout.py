"""storage.layout: the data dir a command uses never depends on its working directory."""

from __future__ import annotations

from pathlib import Path

import pytest

from storage import layout


def test_without_gozero_data_the_per_user_dir_is_used_wherever_we_run(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("GOZERO_DATA", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    seen = set()
    for cwd in (tmp_path / "a", tmp_path / "b"):
        cwd.mkdir()
        monkeypatch.chdir(cwd)
        seen.add(layout.data_dir())
    assert seen == {(tmp_path / "xdg" / "gozero").resolve()}


def test_explicit_then_environment_then_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("GOZERO_DATA", str(tmp_path / "env"))
    assert layout.data_dir() == (tmp_path / "env").resolve()
    assert layout.data_dir(tmp_path / "given") == (tmp_path / "given").resolve()
    monkeypatch.setenv("GOZERO_DATA", "")
    assert layout.data_dir() == layout.default_data_dir().resolve()
