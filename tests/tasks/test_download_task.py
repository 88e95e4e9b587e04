"""The Prefect adapter: `download_source`, catalog expansion, and one retry layer (storage's, not Prefect's)."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from storage.archives import ArchiveError
from storage.catalog import CatalogError
from storage.download import DownloadConfig, DownloadError
from tasks.download import _progress_logger, download_source, expand_sources
from tests.http_server import Route, ScriptedServer, sgf_game, zip_bytes


def test_download_source_returns_a_small_json_summary(tmp_path: Path, data_dir: Path) -> None:
    archive = tmp_path / "club.zip"
    archive.write_bytes(zip_bytes({f"round{i}.sgf": sgf_game(i) for i in range(4)} | {"photo.jpg": b"x"}))
    summary = download_source.fn(str(archive), str(data_dir))
    assert json.loads(json.dumps(summary)) == summary
    assert summary["source"] == "club" and summary["sgf_files"] == 4 and summary["skipped"] == 1
    assert summary["sgf_dirs"] == [str(data_dir / "raw" / "club" / "sgf" / "club")]
    assert download_source.fn(str(archive), str(data_dir))["reused"]


def test_download_source_rejects_an_unknown_source(data_dir: Path) -> None:
    with pytest.raises(CatalogError, match="not in the catalog"):
        download_source.fn("nosuch:2020-01", str(data_dir))


def test_expand_sources_gives_one_source_per_archive() -> None:
    assert expand_sources(["cgos-9x9:2023-01..2023-03", "cwi-9x9", "cwi-9x9"]) == [
        "cgos-9x9:2023-01", "cgos-9x9:2023-02", "cgos-9x9:2023-03", "cwi-9x9"]


@pytest.mark.parametrize(("status", "requests"), [(500, DownloadConfig().attempts), (404, 1)])
def test_a_failing_server_costs_storage_attempts_only_not_prefect_retries(
        prefect_harness, data_dir: Path, monkeypatch: pytest.MonkeyPatch, status: int, requests: int) -> None:
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setattr("storage.download.time.sleep", lambda seconds: None)  # storage's backoff, skipped
    with ScriptedServer() as server:
        url = server.add("/down.zip", Route(b"PK", status=status))
        with pytest.raises(DownloadError, match=str(status)):
            download_source(url, str(data_dir))  # through Prefect's engine, which would retry if asked
        assert server.count() == requests
    assert download_source.retries == 0


def test_a_refused_archive_is_downloaded_once(prefect_harness, data_dir: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    with ScriptedServer() as server:
        url = server.add("/slip.zip", Route(zip_bytes({"../evil.sgf": sgf_game(1)})))
        with pytest.raises(ArchiveError):
            download_source(url, str(data_dir))
        assert server.count() == 1


def test_progress_is_logged_every_tenth(caplog: pytest.LogCaptureFixture) -> None:
    report = _progress_logger("cgos-9x9:2023-01")
    with caplog.at_level(logging.INFO, logger="tasks.download"):
        for done in range(0, 1001, 10):
            report("9x9_2023_01.tar.bz2", done, 1000)
    assert len(caplog.records) == 10
    assert caplog.records[-1].getMessage().endswith("1000/1000 bytes (100%)")
