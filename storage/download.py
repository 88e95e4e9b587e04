"""Fetching game records into the data dir: resumable, verified, retried downloads (stdlib only).

Owns the download half of ``<data>/raw/<source>/`` (storage.archives owns the extraction half):

    <data>/raw/<source>/downloads/<file>        a complete download (renamed into place when whole)
    <data>/raw/<source>/downloads/<file>.part   a partial download; the next run resumes it (HTTP Range)
    <data>/raw/<source>/downloads/<file>.json   sidecar: url, size, sha256, mtime (cheap re-verification)
    <data>/raw/<source>/sgf/<archive-stem>/     extracted SGF; ``.extracted.json`` in it is written last
    <data>/raw/<source>/.lock-<file>            held while one archive is downloaded and extracted

`fetch_source` turns a source string (see storage.catalog) into directories of SGF files;
`download_url` fetches one URL. Failures raise `DownloadError` with a `reason` (``http-404``,
``unknown-host``, ``unreachable``, ``truncated``, ``html-instead-of-archive``, ``checksum-mismatch``,
...). The one retry layer of downloads (the Prefect task adds none): transient failures are retried
with backoff, each try resuming the ``.part`` (Range); permanent ones (4xx but 408/429, unknown
host, a web page, a refused archive) fail at once.
"""

from __future__ import annotations

import contextlib
import hashlib
import http.client
import json
import os
import re
import socket
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any
from urllib.error import HTTPError, URLError
from urllib.parse import urlparse
from urllib.request import Request, urlopen

from gocore.errors import GozeroError
from storage.archives import (
    ArchiveError,
    ExtractLimits,
    ExtractResult,
    archive_stem,
    extract,
    extract_directory,
    file_fingerprint,
)
from storage.atomic import write_json
from storage.catalog import label_from_name, resolve_source
from storage.layout import raw_dir

try:
    import fcntl
except ImportError:  # Windows: no advisory locks; concurrent runs of one source are then unsupported
    fcntl = None  # type: ignore[assignment]

USER_AGENT = "gozero/0.1 (game-record downloader; python urllib)"
ProgressFn = Callable[[str, int, int | None], None]
"""Called as ``progress(file_name, bytes_so_far, total_bytes_or_None)`` while a file downloads."""

_HTML_STARTS = (b"<!doctype", b"<html")
_CONTENT_RANGE = re.compile(r"bytes\s+(\d+)-\d+/(\d+|\*)")
_RETRYABLE = {"unreachable", "truncated", "range-restart", "http-408", "http-429"}
_STATUS_HINTS = {
    404: "the file is not there (moved, or that period was never published); check the URL",
    410: "the file was removed from the server; check the URL",
    401: "the server wants a login; gozero downloads public files only",
    403: "the server refused access; open the URL in a browser to see why",
}


class DownloadError(GozeroError):
    """A download that failed; `reason` is machine-readable, the message says what to do."""

    def __init__(self, reason: str, message: str, url: str | None = None) -> None:
        super().__init__(message)
        self.reason = reason
        self.url = url

    @property
    def is_transient(self) -> bool:
        """Whether trying again later may succeed (network trouble, 5xx, truncation)."""
        return self.reason in _RETRYABLE or self.reason.startswith("http-5")


@dataclass(frozen=True)
class DownloadConfig:
    """How hard and how patiently to download."""

    attempts: int = 5
    """Tries per file, the first included; only transient failures are retried."""
    backoff_seconds: float = 1.0
    """Wait before the second try; doubles for each further try."""
    max_backoff_seconds: float = 60.0
    """Cap on a single wait."""
    timeout_seconds: float = 60.0
    """Socket timeout for connecting and for each read."""
    chunk_bytes: int = 1 << 16
    """Bytes read per call (and per progress report)."""


@dataclass(frozen=True)
class Downloaded:
    """A complete file on disk and what is known about it."""

    path: Path
    size: int
    sha256: str
    reused: bool
    """True when a verified earlier download was kept and nothing was fetched."""


@dataclass(frozen=True)
class SourceResult:
    """Everything one source produced under ``<data>/raw/<name>/``."""

    name: str
    raw_dir: Path
    downloads: tuple[Downloaded, ...]
    extracted: tuple[ExtractResult, ...]

    def summary(self) -> dict[str, Any]:
        """A small JSON-able summary: SGF directories and counts (never file lists)."""
        refusals = [f"{member}: {reason}" for result in self.extracted for member, reason in result.refused]
        return {
            "source": self.name,
            "raw_dir": str(self.raw_dir),
            "sgf_dirs": [str(result.directory) for result in self.extracted],
            "sgf_files": sum(result.sgf_files for result in self.extracted),
            "skipped": sum(result.skipped for result in self.extracted),
            "refused": sum(result.refused_count for result in self.extracted),
            "refusals": refusals[:20],
            "downloaded_bytes": sum(item.size for item in self.downloads if not item.reused),
            "reused": all(item.reused for item in self.downloads) and all(r.reused for r in self.extracted),
        }


def fetch_source(source: str, data: Path, *, config: DownloadConfig | None = None,
                 limits: ExtractLimits | None = None, progress: ProgressFn | None = None) -> SourceResult:
    """Download (if remote) and extract one source string into ``<data>/raw/<name>/``."""
    resolved = resolve_source(source, data)
    raw = raw_dir(data, resolved.name)
    raw.mkdir(parents=True, exist_ok=True)
    downloads: list[Downloaded] = []
    extracted: list[ExtractResult] = []
    for remote in resolved.remote:
        with _exclusive(raw / f".lock-{remote.filename}"):
            item = download_url(remote.url, raw / "downloads" / remote.filename, sha256=remote.sha256,
                                size=remote.size, config=config, progress=progress)
            downloads.append(item)
            extracted.append(_extract_download(item, raw / "sgf", limits))
    for path in resolved.local:
        with _exclusive(raw / f".lock-{path.name}"):
            extracted.extend(_extract_local(path, raw / "sgf", limits))
    return SourceResult(resolved.name, raw, tuple(downloads), tuple(extracted))


def download_url(url: str, destination: Path, *, sha256: str | None = None, size: int | None = None,
                 config: DownloadConfig | None = None, progress: ProgressFn | None = None) -> Downloaded:
    """Fetch `url` to `destination` (resuming ``<destination>.part``), verify it, record its sidecar."""
    if urlparse(url).scheme.lower() not in {"http", "https"}:
        raise DownloadError("unsupported-url", f"{url}: only http(s) URLs are downloaded; pass local "
                                               "files to fetch_source as paths or file:// URLs", url)
    reused = verified_copy(destination, url, sha256=sha256, size=size)
    if reused is not None:
        return reused
    destination.parent.mkdir(parents=True, exist_ok=True)
    part = part_path(destination)
    _fetch_with_retries(_Transfer(url, part, size, config or DownloadConfig(), progress))
    return _finish(part, destination, url, sha256, size)


def part_path(destination: Path) -> Path:
    """Where the partial download of `destination` lives."""
    return destination.with_name(destination.name + ".part")


def sidecar_path(destination: Path) -> Path:
    """Where the verification record of `destination` lives."""
    return destination.with_name(destination.name + ".json")


def verified_copy(destination: Path, url: str, *, sha256: str | None = None,
                  size: int | None = None) -> Downloaded | None:
    """The existing download of `url` at `destination` if it checks out, else None (fetch it)."""
    if not destination.is_file():
        return None
    info, record = destination.stat(), _read_sidecar(destination)
    if record is not None and record.get("url") != url:
        return None  # another URL wrote this file name
    is_fresh = (record is not None and isinstance(record.get("sha256"), str)
                and [record.get("size"), record.get("mtime_ns")] == [info.st_size, info.st_mtime_ns])
    if is_fresh:
        digest = record["sha256"]
    else:
        # No sidecar (crash after the rename) or a touched file: hash once, then trust the sidecar again.
        digest = sha256_of(destination)
        if record is not None and digest != record.get("sha256"):
            return None
    if (sha256 is not None and digest != sha256.lower()) or (size is not None and info.st_size != size):
        return None
    if not is_fresh:
        _write_sidecar(destination, url, digest)
    return Downloaded(destination, info.st_size, digest, reused=True)


def sha256_of(path: Path) -> str:
    """Hex sha256 of a file's bytes."""
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def _fetch_with_retries(transfer: _Transfer) -> None:
    config = transfer.config
    for attempt in range(1, config.attempts + 1):
        try:
            transfer.fetch_once()
            return
        except DownloadError as error:
            if not error.is_transient or attempt >= config.attempts:
                if attempt == 1:
                    raise
                message = f"{error} (gave up after {attempt} attempts)"
                raise DownloadError(error.reason, message, transfer.url) from error
        time.sleep(min(config.max_backoff_seconds, config.backoff_seconds * 2 ** (attempt - 1)))


@dataclass
class _Transfer:
    """One URL streamed into its .part file; one `fetch_once` call is one HTTP request."""

    url: str
    part: Path
    size: int | None
    config: DownloadConfig
    progress: ProgressFn | None
    received: int = 0
    total: int | None = None

    def fetch_once(self) -> None:
        """Request the bytes the .part lacks (all, or from its end with Range) and append them."""
        offset = self.part.stat().st_size if self.part.exists() else 0
        headers = {"User-Agent": USER_AGENT, "Accept-Encoding": "identity"}
        if offset:
            headers["Range"] = f"bytes={offset}-"
        try:
            response = urlopen(Request(self.url, headers=headers), timeout=self.config.timeout_seconds)
        except HTTPError as error:
            with error:
                if error.code == 416 and offset and _range_total(error.headers) == offset:
                    return  # the .part already holds every byte (a crash came just before the rename)
                self._fail_status(error.code, str(error.reason))
        except (URLError, OSError, http.client.HTTPException) as error:
            host, reason = urlparse(self.url).netloc, getattr(error, "reason", error)
            if isinstance(reason, socket.gaierror):  # DNS says no: trying again will not help
                message = f"cannot resolve the host {host} ({reason.strerror}); check the URL, or the DNS settings"
                raise DownloadError("unknown-host", message, self.url) from error
            message = f"cannot reach {host} ({reason}); check the network connection or proxy settings"
            raise DownloadError("unreachable", message, self.url) from error
        with response:
            self._receive(response, offset)

    def _receive(self, response: http.client.HTTPResponse, offset: int) -> None:
        if response.status not in (200, 206):
            self._fail_status(response.status, response.reason)
        if response.headers.get_content_type() in {"text/html", "application/xhtml+xml"}:
            self._refuse_html("Content-Type text/html")
        # A server that ignores Range answers 200 with the whole file: start again from byte 0.
        resumed = offset > 0 and response.status == 206
        if resumed and _range_start(response.headers) != offset:
            self.part.unlink(missing_ok=True)
            raise DownloadError("range-restart", f"{self.url}: the server resumed at the wrong byte; "
                                                 "starting over", self.url)
        self.received = offset if resumed else 0
        self.total = _expected_total(response, self.received)
        self.total = self.size if self.total is None else self.total
        first = self._read(response)
        if not resumed and first.lstrip()[:16].lower().startswith(_HTML_STARTS):
            self._refuse_html("the body starts with <html")
        with open(self.part, "ab" if resumed else "wb") as out:
            self._copy_body(response, out, first)
        if self.total is not None and self.received < self.total:
            raise self._truncated()

    def _copy_body(self, response: http.client.HTTPResponse, out: IO[bytes], chunk: bytes) -> None:
        try:
            while chunk:
                out.write(chunk)
                self.received += len(chunk)
                if self.progress is not None:
                    self.progress(self.part.name.removesuffix(".part"), self.received, self.total)
                chunk = self._read(response)
        finally:
            out.flush()
            os.fsync(out.fileno())  # what was received survives a crash, so the next run can resume

    def _read(self, response: http.client.HTTPResponse) -> bytes:
        try:
            return response.read(self.config.chunk_bytes)
        except (OSError, http.client.HTTPException) as error:  # reset, timeout, IncompleteRead
            raise self._truncated(error) from error

    def _truncated(self, error: Exception | None = None) -> DownloadError:
        of_total = f" of {self.total}" if self.total is not None else ""
        cause = f" ({error})" if error else ""
        message = (f"{self.url}: connection ended after {self.received}{of_total} bytes{cause}; "
                   f"{self.part.name} is kept: run again to resume")
        return DownloadError("truncated", message, self.url)

    def _refuse_html(self, evidence: str) -> None:
        self.part.unlink(missing_ok=True)
        raise DownloadError("html-instead-of-archive",
                            f"{self.url} returned a web page ({evidence}) instead of an archive: usually an "
                            "error or login page, or a link to a download page; open it in a browser and use "
                            "the direct file link", self.url)

    def _fail_status(self, code: int, text: str) -> None:
        if code == 416:
            self.part.unlink(missing_ok=True)
            raise DownloadError("range-restart", f"{self.url}: the server refused to resume; starting over",
                                self.url)
        hint = _STATUS_HINTS.get(code, "server trouble; try again later" if code >= 500 else "check the URL")
        raise DownloadError(f"http-{code}", f"{self.url}: server answered {code} {text}; {hint}", self.url)


def _range_start(headers: Any) -> int | None:
    match = _CONTENT_RANGE.match(headers.get("Content-Range", ""))
    return int(match.group(1)) if match else None


def _range_total(headers: Any) -> int | None:
    value = (headers.get("Content-Range") or "").rpartition("/")[2]
    return int(value) if value.isdigit() else None


def _expected_total(response: http.client.HTTPResponse, start: int) -> int | None:
    if response.status == 206:
        match = _CONTENT_RANGE.match(response.headers.get("Content-Range", ""))
        if match and match.group(2).isdigit():
            return int(match.group(2))
    length = response.headers.get("Content-Length", "")
    return start + int(length) if length.isdigit() else None


def _finish(part: Path, destination: Path, url: str, sha256: str | None, size: int | None) -> Downloaded:
    actual = part.stat().st_size
    if size is not None and actual != size:
        part.unlink()
        raise DownloadError("size-mismatch", f"{destination.name}: expected {size} bytes, got {actual}; "
                                             "deleted it (changed upstream, or the catalog is wrong)", url)
    digest = sha256_of(part)
    if sha256 is not None and digest != sha256.lower():
        part.unlink()
        raise DownloadError("checksum-mismatch", f"{destination.name}: sha256 is {digest}, expected {sha256}; "
                                                 "deleted it (corrupted in transit, or changed upstream)", url)
    os.replace(part, destination)
    _write_sidecar(destination, url, digest)
    return Downloaded(destination, actual, digest, reused=False)


def _read_sidecar(destination: Path) -> dict[str, Any] | None:
    try:
        record = json.loads(sidecar_path(destination).read_text())
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) else None


def _write_sidecar(destination: Path, url: str, digest: str) -> None:
    stat = destination.stat()
    write_json(sidecar_path(destination), {"url": url, "size": stat.st_size, "sha256": digest, "mtime_ns": stat.st_mtime_ns})


def _extract_download(item: Downloaded, sgf_root: Path, limits: ExtractLimits | None) -> ExtractResult:
    destination = sgf_root / label_from_name(archive_stem(item.path.name), fallback="download")
    try:
        return extract(item.path, destination, f"sha256:{item.sha256}", limits)
    except ArchiveError as error:
        if error.reason == "corrupt":  # a damaged download is useless: fetch it afresh next run
            item.path.unlink(missing_ok=True)
            sidecar_path(item.path).unlink(missing_ok=True)
            raise ArchiveError(error.reason, f"{error}; the download was deleted, run again") from error
        raise


def _extract_local(path: Path, sgf_root: Path, limits: ExtractLimits | None) -> list[ExtractResult]:
    if path.is_dir():
        return extract_directory(path, sgf_root, limits)
    destination = sgf_root / label_from_name(archive_stem(path.name), fallback="local")
    return [extract(path, destination, file_fingerprint(path), limits)]


@contextlib.contextmanager
def _exclusive(lock_path: Path) -> Iterator[None]:
    """Hold an exclusive advisory lock on `lock_path`; other processes wait (not re-entrant)."""
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with open(lock_path, "a+b") as handle:
        if fcntl is not None:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        yield  # closing the file releases the lock
