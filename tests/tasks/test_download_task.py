"""The Prefect adapter: `download_source.fn`, catalog expansion, and which failures are retried."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from prefect.states import Failed

from storage.archives import ArchiveError
from storage.catalog import CatalogError
from storage.download import DownloadError
from tasks.download import _is_io_trouble, _progress_logger, download_source, expand_sources
from tests.http_server import sgf_game, zip_bytes


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


@pytest.mark.parametrize(("error", "should_retry"), [
    (DownloadError("unreachable", "no network"), True),
    (DownloadError("http-503", "busy"), True),
    (DownloadError("truncated", "cut"), True),
    (ConnectionResetError("reset"), True),
    (DownloadError("http-404", "gone"), False),
    (DownloadError("checksum-mismatch", "bad"), False),
    (DownloadError("html-instead-of-archive", "html"), False),
    (ArchiveError("unsafe-path", "slip"), False),
    (CatalogError("bad-period", "typo"), False),
])
def test_only_io_trouble_is_retried(error: Exception, should_retry: bool) -> None:
    assert _is_io_trouble(download_source, None, Failed(data=error)) is should_retry


def test_progress_is_logged_every_tenth(caplog: pytest.LogCaptureFixture) -> None:
    report = _progress_logger("cgos-9x9:2023-01")
    with caplog.at_level(logging.INFO, logger="tasks.download"):
        for done in range(0, 1001, 10):
            report("9x9_2023_01.tar.bz2", done, 1000)
    assert len(caplog.records) == 10
    assert caplog.records[-1].getMessage().endswith("1000/1000 bytes (100%)")
