"""Safe, atomic extraction of game-record archives into a directory of SGF files.

Reads ``.zip``, ``.tar``, ``.tar.gz``/``.tgz``, ``.tar.bz2``/``.tbz2``, ``.tar.xz``/``.txz``, plain
``.sgf``, ``.sgfs`` (one game per line) and ``.sgf.gz``, and local folders of those. Only SGF-like
members are kept: ``.sgf`` and ``.sgfs`` as they are (an ``.sgfs`` stays one file; the encoder splits
its lines), ``.sgf.gz`` decompressed; suffixes are lower-cased so ``**/*.sgf`` finds everything.
Other members are counted as skipped.

Safety: a member with an absolute path, a drive letter or ``..`` makes the whole archive unsafe
(``ArchiveError(reason='unsafe-path')``); links, devices and encrypted entries are refused one by one
and reported. Total decompressed bytes and the number of entries are bounded (`ExtractLimits`),
counting the bytes actually produced, never a header's claim.

Atomicity: members go to ``.tmp-<name>.partial-*`` next to the destination; the marker
``.extracted.json`` is written last and the directory is renamed into place, so a directory that has
a marker is complete. A rerun with the same fingerprint (the archive's sha256, or size+mtime for
local files) reuses it. One writer per destination at a time (storage.download holds a lock).
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import json
import lzma
import os
import re
import shutil
import stat
import tarfile
import tempfile
import zipfile
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO, Any

from gocore.errors import GozeroError
from storage.atomic import TEMP_PREFIX, write_json

MARKER = ".extracted.json"
_TAR_SUFFIXES = (".tar.gz", ".tar.bz2", ".tar.xz", ".tgz", ".tbz2", ".tbz", ".txz", ".tar")
_SGF_SUFFIXES = (".sgf.gz", ".sgfs", ".sgf")
_DRIVE = re.compile(r"^[A-Za-z]:")
_CHUNK = 1 << 16
_MAX_LISTED_REFUSALS = 100


class ArchiveError(GozeroError):
    """An archive that cannot be extracted; `reason` is e.g. unsafe-path, too-large, corrupt."""

    def __init__(self, reason: str, message: str, member: str | None = None) -> None:
        super().__init__(message)
        self.reason = reason
        self.member = member


@dataclass(frozen=True)
class ExtractLimits:
    """Bounds on what one archive may produce."""

    max_total_bytes: int = 4 * 2**30
    """Decompressed bytes written, summed over kept members."""
    max_entries: int = 2_000_000
    """Entries examined (kept, skipped or refused)."""


@dataclass(frozen=True)
class ExtractResult:
    """What one extraction produced (or found already done)."""

    directory: Path
    sgf_files: int
    skipped: int
    refused: tuple[tuple[str, str], ...]
    """(member, reason) pairs, the first 100."""
    refused_count: int
    total_bytes: int
    reused: bool


@dataclass(frozen=True)
class _Member:
    name: str
    kind: str  # file, dir, or the refusal reason: link, device, encrypted
    open: Callable[[], IO[bytes]]


def sgf_suffix(name: str) -> str | None:
    """The SGF-like suffix of `name` (``.sgf``, ``.sgfs``, ``.sgf.gz``), case-insensitively, else None."""
    lowered = name.lower()
    return next((suffix for suffix in _SGF_SUFFIXES if lowered.endswith(suffix)), None)


def archive_kind(name: str) -> str | None:
    """``zip``, ``tar`` or ``sgf`` from the file name, else None."""
    lowered = name.lower()
    if lowered.endswith(".zip"):
        return "zip"
    if lowered.endswith(_TAR_SUFFIXES):
        return "tar"
    return "sgf" if sgf_suffix(lowered) else None


def archive_stem(name: str) -> str:
    """`name` without its archive or SGF suffix (``9x9_2023_01.tar.bz2`` → ``9x9_2023_01``)."""
    lowered = name.lower()
    for suffix in (".zip", *_TAR_SUFFIXES, *_SGF_SUFFIXES):
        if lowered.endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return name


def read_marker(destination: Path) -> dict[str, Any] | None:
    """The completion marker of an extracted directory, or None if it is absent or unreadable."""
    try:
        return json.loads((destination / MARKER).read_text())
    except (OSError, ValueError):
        return None


def file_fingerprint(path: Path) -> str:
    """Cheap identity of a local file: size and modification time."""
    info = path.stat()
    return f"stat:{info.st_size}:{info.st_mtime_ns}"


def extract(archive: Path, destination: Path, fingerprint: str,
            limits: ExtractLimits | None = None) -> ExtractResult:
    """Extract the SGF members of `archive` into `destination` atomically; reuse it if already done."""
    done = _reusable(destination, fingerprint)
    if done is not None:
        return done
    kind = archive_kind(archive.name) or _sniff_kind(archive)
    return _extract_members(_members(archive, kind), destination, fingerprint, archive.name, limits)


def extract_directory(folder: Path, target_root: Path,
                      limits: ExtractLimits | None = None) -> list[ExtractResult]:
    """Collect a local folder: its loose SGF files into one directory, each archive into its own."""
    loose, archives = _scan_folder(folder)
    results = []
    if loose:
        destination = target_root / folder.name
        fingerprint = _listing_fingerprint(loose)
        done = _reusable(destination, fingerprint)
        results.append(done or _extract_members(_loose_members(loose), destination, fingerprint,
                                                folder.name, limits))
    for path in archives:
        name = "-".join([*path.relative_to(folder).parent.parts, archive_stem(path.name)])
        name = f"{name}-archive" if name == folder.name else name
        results.append(extract(path, target_root / name, file_fingerprint(path), limits))
    return results


def _reusable(destination: Path, fingerprint: str) -> ExtractResult | None:
    marker = read_marker(destination)
    if not isinstance(marker, dict) or marker.get("fingerprint") != fingerprint:
        return None
    try:
        return ExtractResult(destination, marker["sgf_files"], marker["skipped"],
                             tuple((member, reason) for member, reason in marker["refused"]),
                             marker["refused_count"], marker["total_bytes"], reused=True)
    except (KeyError, TypeError, ValueError):  # a marker from another version: extract again
        return None


def _sniff_kind(path: Path) -> str:
    # A URL like .../download?id=3 gives no suffix: look at the bytes.
    if zipfile.is_zipfile(path):
        return "zip"
    if tarfile.is_tarfile(path):
        return "tar"
    with open(path, "rb") as handle:
        if handle.read(64).lstrip().startswith(b"("):
            return "sgf"
    raise ArchiveError("unsupported-format", f"{path.name}: not a zip, tar or SGF file")


@contextlib.contextmanager
def _members(archive: Path, kind: str) -> Iterator[Iterator[_Member]]:
    if kind == "zip":
        with zipfile.ZipFile(archive) as opened:
            yield (_Member(info.filename, _zip_kind(info), lambda info=info: opened.open(info))
                   for info in opened.infolist())
    elif kind == "tar":
        # "r:*" streams through gz/bz2/xz; members are read in archive order, once each.
        with tarfile.open(archive, mode="r:*") as opened:
            yield (_Member(info.name, _tar_kind(info), lambda info=info: opened.extractfile(info))
                   for info in _forgetful_tar_iter(opened))
    else:
        # A file sniffed as SGF may have no suffix (a URL like .../game?id=3): give it one.
        name = archive.name if sgf_suffix(archive.name) else f"{archive.name}.sgf"
        yield iter([_Member(name, "file", lambda: open(archive, "rb"))])


def _forgetful_tar_iter(opened: tarfile.TarFile) -> Iterator[tarfile.TarInfo]:
    # Iterating a TarFile keeps every TarInfo (a yearly KGS archive has ~200k); links would need them
    # for hardlink targets, but links are refused, so each one is forgotten once it has been read.
    while (info := opened.next()) is not None:
        yield info
        opened.members.clear()


@contextlib.contextmanager
def _loose_members(files: list[tuple[str, str]]) -> Iterator[Iterator[_Member]]:
    yield (_Member(name, "file", lambda path=path: open(path, "rb")) for name, path in files)


def _zip_kind(info: zipfile.ZipInfo) -> str:
    mode = info.external_attr >> 16
    if info.is_dir() or stat.S_ISDIR(mode):
        return "dir"
    if info.flag_bits & 0x1:
        return "encrypted"
    if stat.S_ISLNK(mode):
        return "link"
    # Only Unix-made zips carry a file type; 0 means "not recorded", i.e. a plain file.
    return "device" if stat.S_IFMT(mode) not in (0, stat.S_IFREG) else "file"


def _tar_kind(info: tarfile.TarInfo) -> str:
    if info.isreg():
        return "file"
    if info.isdir():
        return "dir"
    return "link" if info.issym() or info.islnk() else "device"


def _extract_members(members: contextlib.AbstractContextManager[Iterator[_Member]], destination: Path,
                     fingerprint: str, label: str, limits: ExtractLimits | None) -> ExtractResult:
    destination.parent.mkdir(parents=True, exist_ok=True)
    _remove_partials(destination)
    temp = Path(tempfile.mkdtemp(prefix=f"{TEMP_PREFIX}{destination.name}.partial-", dir=destination.parent))
    try:
        extraction = _Extraction(temp, limits or ExtractLimits(), label)
        with _archive_errors(label), members as entries:
            for member in entries:
                extraction.add(member)
        write_json(temp / MARKER, extraction.marker(fingerprint))  # last: its presence means complete
        _move_into_place(temp, destination)
    finally:
        shutil.rmtree(temp, ignore_errors=True)
    return ExtractResult(destination, extraction.sgf_files, extraction.skipped, tuple(extraction.refused),
                         extraction.refused_count, extraction.total_bytes, reused=False)


@contextlib.contextmanager
def _archive_errors(label: str) -> Iterator[None]:
    try:
        yield
    except (tarfile.TarError, zipfile.BadZipFile, EOFError, zlib.error, lzma.LZMAError) as error:
        raise ArchiveError("corrupt", f"{label}: damaged or not an archive ({error}); "
                                      "delete it and download again") from error
    except OSError as error:
        if error.errno is not None:  # a real I/O error (disk full, permissions): not the archive's fault
            raise
        raise ArchiveError("corrupt", f"{label}: damaged archive ({error}); delete it and download again") \
            from error


class _Extraction:
    """Members written into a temp dir, with the counts and limits of one archive."""

    def __init__(self, root: Path, limits: ExtractLimits, label: str) -> None:
        self.root, self.limits, self.label = root, limits, label
        self.entries = self.sgf_files = self.skipped = self.total_bytes = self.refused_count = 0
        self.refused: list[tuple[str, str]] = []
        self._made: set[str] = set()  # directories already created under root

    def add(self, member: _Member) -> None:
        """Keep, skip or refuse one member; raise ArchiveError if the archive is unsafe or too big."""
        self.entries += 1
        if self.entries > self.limits.max_entries:
            raise ArchiveError("too-many-files", f"{self.label}: more than {self.limits.max_entries} "
                                                 "entries; raise ExtractLimits.max_entries if expected")
        parts = _safe_parts(member.name, self.label)
        if member.kind == "dir" or not parts:
            return
        if member.kind != "file":
            self._refuse(member.name, member.kind)
        elif (suffix := sgf_suffix(parts[-1])) is None:
            self.skipped += 1
        else:
            self._write(member, parts, suffix)

    def marker(self, fingerprint: str) -> dict[str, Any]:
        """The completion record written last into the directory."""
        return {"source": self.label, "fingerprint": fingerprint, "sgf_files": self.sgf_files,
                "skipped": self.skipped, "refused": self.refused, "refused_count": self.refused_count,
                "total_bytes": self.total_bytes}

    def _refuse(self, name: str, reason: str) -> None:
        self.refused_count += 1
        if len(self.refused) < _MAX_LISTED_REFUSALS:
            self.refused.append((name, reason))

    def _write(self, member: _Member, parts: list[str], suffix: str) -> None:
        final_suffix = ".sgfs" if suffix == ".sgfs" else ".sgf"
        parent = os.path.join(self.root, *parts[:-1])
        target = os.path.join(parent, parts[-1][: -len(suffix)] + final_suffix)
        try:
            if parent not in self._made:
                os.makedirs(parent, exist_ok=True)
                self._made.add(parent)
            with member.open() as raw, open(target, "xb") as out:
                stream = gzip.GzipFile(fileobj=raw) if suffix == ".sgf.gz" else raw
                self._copy_bounded(stream, out)
        except (FileExistsError, NotADirectoryError):
            self._refuse(member.name, "duplicate")  # e.g. a.SGF next to a.sgf
            return
        self.sgf_files += 1

    def _copy_bounded(self, source: IO[bytes], out: IO[bytes]) -> None:
        # Count the bytes really produced: a zip header's size claim is not trusted (zip bombs).
        while chunk := source.read(_CHUNK):
            self.total_bytes += len(chunk)
            if self.total_bytes > self.limits.max_total_bytes:
                raise ArchiveError("too-large", f"{self.label}: more than {self.limits.max_total_bytes} "
                                                "bytes of SGF; raise ExtractLimits.max_total_bytes if "
                                                "expected")
            out.write(chunk)


def _safe_parts(name: str, label: str) -> list[str]:
    """Path parts of a member name; ArchiveError('unsafe-path') if it could escape the target."""
    normalized = name.replace("\\", "/")
    parts = [part for part in PurePosixPath(normalized).parts if part not in ("", ".")]
    if normalized.startswith("/") or _DRIVE.match(normalized) or ".." in parts or "\0" in normalized:
        raise ArchiveError("unsafe-path", f"{label}: member {name!r} points outside the extraction "
                                          "directory; the archive was not extracted", member=name)
    return parts


def _remove_partials(destination: Path) -> None:
    # Left by a crashed run; safe to delete because download.py holds the lock for this destination.
    for stale in destination.parent.glob(f"{TEMP_PREFIX}{_glob_escape(destination.name)}.partial-*"):
        shutil.rmtree(stale, ignore_errors=True)


def _glob_escape(name: str) -> str:
    return re.sub(r"([*?\[])", r"[\1]", name)


def _move_into_place(temp: Path, destination: Path) -> None:
    if destination.exists():
        # Rename the old copy away first: a crash then leaves no marker-less directory at `destination`.
        old = Path(tempfile.mkdtemp(prefix=f"{TEMP_PREFIX}{destination.name}.partial-",
                                    dir=destination.parent))
        os.replace(destination, old / "old")
        shutil.rmtree(old, ignore_errors=True)
    os.replace(temp, destination)


def _scan_folder(folder: Path) -> tuple[list[tuple[str, str]], list[Path]]:
    """(name relative to `folder` in POSIX form, path) of each loose SGF file, and the archives;
    hidden files and directories are skipped. Plain strings: pathlib per file costs more than
    copying a small SGF."""
    loose, archives = [], []
    for directory, subdirs, files in os.walk(folder):
        subdirs[:] = sorted(name for name in subdirs if not name.startswith("."))
        relative = os.path.relpath(directory, folder).replace(os.sep, "/")
        prefix = "" if relative == "." else relative + "/"
        for name in sorted(files):
            kind = None if name.startswith(".") else archive_kind(name)
            if kind == "sgf":
                loose.append((prefix + name, os.path.join(directory, name)))
            elif kind is not None:
                archives.append(Path(directory, name))
    return loose, archives


def _listing_fingerprint(files: list[tuple[str, str]]) -> str:
    digest = hashlib.sha256()
    for name, path in files:
        info = os.stat(path)
        digest.update(f"{name}\0{info.st_size}\0{info.st_mtime_ns}\n".encode())
    return f"listing:{digest.hexdigest()}"
