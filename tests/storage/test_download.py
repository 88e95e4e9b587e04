"""Downloads against a real HTTP server on 127.0.0.1: retries, resume, verification, refusals, reuse."""

from __future__ import annotations

import hashlib
import json
import socket
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from storage.archives import ArchiveError
from storage.catalog import CATALOG, CatalogEntry
from storage.download import DownloadConfig, DownloadError, download_url, fetch_source, part_path, sidecar_path
from tests.http_server import Route, ScriptedServer, sgf_game, tar_bytes, zip_bytes

FAST = DownloadConfig(attempts=3, backoff_seconds=0.001, max_backoff_seconds=0.01, timeout_seconds=5,
                      chunk_bytes=256)
GAMES = {f"2023/01/{index:02d}/{index}.sgf": sgf_game(index) * 20 for index in range(12)}
TAR_BZ2 = tar_bytes(GAMES, "bz2")
ZIP = zip_bytes(GAMES)


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[ScriptedServer]:
    """A scripted server; proxies are bypassed so requests really go to 127.0.0.1."""
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    with ScriptedServer() as running:
        yield running


def snapshot(root: Path) -> dict[str, int]:
    return {path.relative_to(root).as_posix(): path.stat().st_mtime_ns for path in root.rglob("*")}


@pytest.mark.parametrize(("name", "payload"), [("9x9_2023_01.tar.bz2", TAR_BZ2), ("games.zip", ZIP)])
def test_good_archive_is_downloaded_verified_and_extracted(server: ScriptedServer, data_dir: Path,
                                                           name: str, payload: bytes) -> None:
    url = server.add(f"/archives/{name}", Route(payload))
    result = fetch_source(url, data_dir, config=FAST)
    summary = result.summary()
    assert summary["sgf_files"] == len(GAMES) and summary["refused"] == 0 and not summary["reused"]
    assert summary["downloaded_bytes"] == len(payload)
    download = result.downloads[0].path
    assert download.read_bytes() == payload and not part_path(download).exists()
    record = json.loads(sidecar_path(download).read_text())
    assert record["sha256"] == hashlib.sha256(payload).hexdigest() and record["url"] == url
    sgf_dir = Path(summary["sgf_dirs"][0])
    assert sgf_dir.parent == data_dir / "raw" / result.name / "sgf"
    assert (sgf_dir / "2023/01/03/3.sgf").read_bytes() == GAMES["2023/01/03/3.sgf"]


def test_second_fetch_makes_no_request_and_writes_nothing(server: ScriptedServer, data_dir: Path) -> None:
    url = server.add("/9x9_2023_02.tar.bz2", Route(TAR_BZ2))
    fetch_source(url, data_dir, config=FAST)
    requests, files = server.count(), snapshot(data_dir)
    again = fetch_source(url, data_dir, config=FAST).summary()
    assert server.count() == requests == 1
    assert snapshot(data_dir) == files
    assert again["reused"] and again["sgf_files"] == len(GAMES) and again["downloaded_bytes"] == 0


def test_server_errors_are_retried_with_backoff(server: ScriptedServer, tmp_path: Path) -> None:
    url = server.add("/flaky.tar.bz2", Route(TAR_BZ2, fail_first=2))
    download_url(url, tmp_path / "flaky.tar.bz2", config=FAST)
    assert [hit.status for hit in server.hits] == [500, 500, 200]
    assert server.count("/flaky.tar.bz2") == 3


def test_server_errors_past_the_attempt_budget_fail_with_the_status(server: ScriptedServer,
                                                                    tmp_path: Path) -> None:
    url = server.add("/down.zip", Route(ZIP, fail_first=10))
    with pytest.raises(DownloadError, match="gave up after 3 attempts") as error:
        download_url(url, tmp_path / "down.zip", config=FAST)
    assert error.value.reason == "http-500" and error.value.is_transient
    assert server.count() == 3


def test_not_found_is_not_retried(server: ScriptedServer, tmp_path: Path) -> None:
    url = server.add("/gone.zip", Route(ZIP, status=404))
    with pytest.raises(DownloadError, match="404") as error:
        download_url(url, tmp_path / "gone.zip", config=FAST)
    assert error.value.reason == "http-404" and not error.value.is_transient
    assert server.count() == 1


def test_truncated_download_keeps_the_part_and_says_so(server: ScriptedServer, tmp_path: Path) -> None:
    url = server.add("/cut.tar.bz2", Route(TAR_BZ2, cut_at=100))
    target = tmp_path / "cut.tar.bz2"
    with pytest.raises(DownloadError, match="run again to resume") as error:
        download_url(url, target, config=FAST)
    assert error.value.reason == "truncated"
    assert not target.exists()
    assert part_path(target).read_bytes() == TAR_BZ2[:300]  # each attempt resumed where the last stopped
    assert server.ranges("/cut.tar.bz2") == [None, "bytes=100-", "bytes=200-"]


def test_interrupted_download_resumes_with_a_range_request(server: ScriptedServer, data_dir: Path) -> None:
    half = len(TAR_BZ2) // 2
    url = server.add("/9x9_2023_03.tar.bz2", Route(TAR_BZ2, cut_at=half, cut_requests=1))
    with pytest.raises(DownloadError):
        fetch_source(url, data_dir, config=DownloadConfig(attempts=1, timeout_seconds=5))
    part = data_dir / "raw" / "9x9_2023_03" / "downloads" / "9x9_2023_03.tar.bz2.part"
    assert part.stat().st_size == half
    result = fetch_source(url, data_dir, config=FAST)
    assert server.ranges("/9x9_2023_03.tar.bz2") == [None, f"bytes={half}-"]
    assert result.downloads[0].sha256 == hashlib.sha256(TAR_BZ2).hexdigest()
    assert result.summary()["sgf_files"] == len(GAMES) and not part.exists()


def test_server_ignoring_range_restarts_from_zero(server: ScriptedServer, tmp_path: Path) -> None:
    url = server.add("/norange.zip", Route(ZIP, honor_range=False))
    target = tmp_path / "norange.zip"
    part_path(target).write_bytes(b"stale bytes from another attempt")
    done = download_url(url, target, config=FAST)
    assert server.ranges("/norange.zip") == ["bytes=32-"]
    assert target.read_bytes() == ZIP and done.sha256 == hashlib.sha256(ZIP).hexdigest()


def test_complete_part_left_by_a_crash_is_finished_without_refetching(server: ScriptedServer,
                                                                      tmp_path: Path) -> None:
    url = server.add("/done.zip", Route(ZIP))
    target = tmp_path / "done.zip"
    part_path(target).write_bytes(ZIP)
    download_url(url, target, config=FAST)
    assert [hit.status for hit in server.hits] == [416]
    assert target.read_bytes() == ZIP


def test_wrong_checksum_is_refused_and_deleted(server: ScriptedServer, tmp_path: Path) -> None:
    url = server.add("/bad.zip", Route(ZIP))
    target = tmp_path / "bad.zip"
    with pytest.raises(DownloadError, match="expected 000") as error:
        download_url(url, target, sha256="0" * 64, config=FAST)
    assert error.value.reason == "checksum-mismatch"
    assert not target.exists() and not part_path(target).exists()


def test_known_size_mismatch_is_refused(server: ScriptedServer, tmp_path: Path) -> None:
    url = server.add("/size.zip", Route(ZIP))
    with pytest.raises(DownloadError) as error:
        download_url(url, tmp_path / "size.zip", size=len(ZIP) - 1, config=FAST)
    assert error.value.reason == "size-mismatch"


def test_matching_checksum_and_size_are_accepted(server: ScriptedServer, tmp_path: Path) -> None:
    url = server.add("/ok.zip", Route(ZIP))
    done = download_url(url, tmp_path / "ok.zip", sha256=hashlib.sha256(ZIP).hexdigest().upper(),
                        size=len(ZIP), config=FAST)
    assert done.size == len(ZIP) and not done.reused


@pytest.mark.parametrize("route", [
    Route(b"<!DOCTYPE html><html><body>Sign in</body></html>", content_type="text/html; charset=utf-8"),
    Route(b"\n  <html><body>Not here</body></html>", content_type="application/zip"),
])
def test_html_page_instead_of_an_archive_is_refused(server: ScriptedServer, tmp_path: Path,
                                                    route: Route) -> None:
    url = server.add("/go9.zip", route)
    target = tmp_path / "go9.zip"
    with pytest.raises(DownloadError, match="web page") as error:
        download_url(url, target, config=FAST)
    assert error.value.reason == "html-instead-of-archive"
    assert not target.exists() and not part_path(target).exists()
    assert server.count() == 1


def test_zip_slip_archive_fails_without_writing_outside(server: ScriptedServer, data_dir: Path,
                                                       tmp_path: Path) -> None:
    evil = zip_bytes({"ok.sgf": sgf_game(1), "../evil.sgf": sgf_game(2), "/tmp/gozero-evil.sgf": sgf_game(3)})
    url = server.add("/slip.zip", Route(evil))
    with pytest.raises(ArchiveError) as error:
        fetch_source(url, data_dir, config=FAST)
    assert error.value.reason == "unsafe-path"
    assert not any(path.name == "evil.sgf" for path in tmp_path.rglob("*"))
    assert not Path("/tmp/gozero-evil.sgf").exists()
    assert list((data_dir / "raw" / "slip" / "sgf").iterdir()) == []


def test_symlink_in_a_tar_is_refused_and_reported(server: ScriptedServer, data_dir: Path) -> None:
    payload = tar_bytes({"ok.sgf": sgf_game(1)}, "bz2", symlinks={"shadow.sgf": "/etc/shadow"})
    url = server.add("/links.tar.bz2", Route(payload))
    summary = fetch_source(url, data_dir, config=FAST).summary()
    assert summary["sgf_files"] == 1 and summary["refused"] == 1
    assert summary["refusals"] == ["shadow.sgf: link"]


def test_damaged_download_is_deleted_so_a_rerun_fetches_it_again(server: ScriptedServer,
                                                                  data_dir: Path) -> None:
    url = server.add("/broken.tar.bz2", Route(TAR_BZ2[:-50] + b"x" * 50))
    with pytest.raises(ArchiveError, match="run again") as error:
        fetch_source(url, data_dir, config=FAST)
    assert error.value.reason == "corrupt"
    assert list((data_dir / "raw" / "broken" / "downloads").iterdir()) == []


def test_modified_download_is_fetched_again(server: ScriptedServer, tmp_path: Path) -> None:
    url = server.add("/edit.zip", Route(ZIP))
    target = tmp_path / "edit.zip"
    download_url(url, target, config=FAST)
    target.write_bytes(b"y" * len(ZIP))  # same size, new content and mtime: the sidecar no longer matches
    again = download_url(url, target, config=FAST)
    assert not again.reused and target.read_bytes() == ZIP and server.count() == 2


def test_progress_reports_bytes_so_far_and_total(server: ScriptedServer, tmp_path: Path) -> None:
    url = server.add("/progress.zip", Route(ZIP))
    calls: list[tuple[str, int, int | None]] = []
    download_url(url, tmp_path / "progress.zip", config=FAST, progress=lambda *call: calls.append(call))
    assert len(calls) == -(-len(ZIP) // FAST.chunk_bytes)
    assert calls[-1] == ("progress.zip", len(ZIP), len(ZIP))
    assert [done for _, done, _ in calls] == sorted(done for _, done, _ in calls)


def test_unreachable_host_fails_after_retries(tmp_path: Path) -> None:
    with socket.socket() as probe:  # a port nobody listens on once the probe is closed
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(DownloadError, match="cannot reach") as error:
        download_url(f"http://127.0.0.1:{port}/x.zip", tmp_path / "x.zip", config=FAST)
    assert error.value.reason == "unreachable"


def test_a_host_name_that_does_not_resolve_fails_at_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("no_proxy", "*")  # resolve it here, not at a proxy
    waits: list[float] = []
    monkeypatch.setattr("storage.download.time.sleep", waits.append)
    with pytest.raises(DownloadError, match="cannot resolve the host") as error:
        download_url("http://no-such-host.invalid/x.zip", tmp_path / "x.zip", config=FAST)
    assert error.value.reason == "unknown-host" and not error.value.is_transient
    assert waits == []  # not retried


def test_a_refused_archive_is_downloaded_once(server: ScriptedServer, data_dir: Path) -> None:
    url = server.add("/refused.zip", Route(zip_bytes({"../evil.sgf": sgf_game(1)})))
    with pytest.raises(ArchiveError, match="unsafe|outside"):
        fetch_source(url, data_dir, config=FAST)
    assert server.count() == 1


def test_only_http_urls_are_downloaded(tmp_path: Path) -> None:
    with pytest.raises(DownloadError) as error:
        download_url("ftp://example.org/x.zip", tmp_path / "x.zip")
    assert error.value.reason == "unsupported-url"


def test_file_url_local_file_and_local_folder_need_no_server(tmp_path: Path, data_dir: Path) -> None:
    archive = tmp_path / "mine.tar.bz2"
    archive.write_bytes(TAR_BZ2)
    folder = tmp_path / "loose"
    folder.mkdir()
    (folder / "one.sgf").write_bytes(sgf_game(1))
    by_url = fetch_source(archive.as_uri(), data_dir).summary()
    by_path = fetch_source(str(archive), data_dir).summary()
    by_folder = fetch_source(str(folder), data_dir).summary()
    assert by_url["sgf_files"] == by_path["sgf_files"] == len(GAMES)
    assert not by_url["reused"] and by_path["reused"]  # same file, same source name: done once
    assert by_folder["sgf_files"] == 1 and by_folder["sgf_dirs"] == [str(data_dir / "raw/loose/sgf/loose")]
    assert not (data_dir / "raw" / "mine" / "downloads").exists()  # local files are read in place


def test_catalog_source_downloads_each_month_into_one_source_dir(server: ScriptedServer, data_dir: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    for month in ("01", "02"):
        server.add(f"/cgos/9x9_2023_{month}.tar.bz2", Route(TAR_BZ2))
    entry = CatalogEntry(name="test-9x9", description="test", board_size=9, verified="local test server",
                         url=server.url("/cgos/9x9_{year}_{month:02d}.tar.bz2"), first_month="2020-01")
    monkeypatch.setitem(CATALOG, entry.name, entry)
    summary = fetch_source("test-9x9:2023-01..2023-02", data_dir, config=FAST).summary()
    root = data_dir / "raw" / "test-9x9" / "sgf"
    assert summary["sgf_dirs"] == [str(root / "9x9_2023_01"), str(root / "9x9_2023_02")]
    assert summary["sgf_files"] == 2 * len(GAMES) and server.count() == 2


def test_concurrent_fetches_of_one_source_download_it_once(server: ScriptedServer, data_dir: Path) -> None:
    url = server.add("/shared.tar.bz2", Route(TAR_BZ2))
    with ThreadPoolExecutor(max_workers=3) as pool:
        summaries = list(pool.map(lambda _: fetch_source(url, data_dir, config=FAST).summary(), range(3)))
    assert server.count() == 1
    assert [summary["sgf_files"] for summary in summaries] == [len(GAMES)] * 3
    assert sorted(summary["reused"] for summary in summaries) == [False, True, True]
