"""Named public game-record sources and the parser that turns a source string into files to fetch.

A *source string* is one of
  - a catalog name with an optional period: ``cgos-9x9:2023-01..2023-06``, ``cwi-9x9``, ``kgs:2019-04``,
    ``kgs:2010..2012``, ``kgs-4d:2015`` (a period is ``YYYY-MM``, ``YYYY``, or ``A..B`` of either), or
    ``last-N-months``: the N whole months before the current one, in UTC, read when the source is
    expanded or resolved (on 2026-03-15, ``cgos-9x9:last-12-months`` is ``2025-03..2026-02``), so a
    monthly schedule fetches a moving window;
  - an ``http(s)://`` URL of an archive or SGF file;
  - a ``file://`` URL or a local path: an archive, an ``.sgf``/``.sgfs`` file, or a folder of them;
  - ``data:PATH``: the local path PATH under the data dir (``data:inbox`` is ``<data>/inbox``), resolved
    when the source is fetched, so a deployment names a folder without knowing where the data dir is.
    PATH is relative and stays inside the data dir. ``resolve_source(text, data)`` takes the data dir;
    without it, ``storage.layout.data_dir()`` ($GOZERO_DATA, else the per-user default);
    ``storage.download.fetch_source`` passes the data dir it fetches into.

| name          | period                       | games                                       | internet |
|---------------|------------------------------|---------------------------------------------|----------|
| `cgos-9x9`    | months from 2015-11          | CGOS 9x9 server (engines), a month of games | yes      |
| `cwi-9x9`     | -                            | ~500 9x9 pro games, A. Brouwer's CWI set    | yes      |
| `goquest-9x9` | -                            | GoQuest app, 9x9 games of top-50 players    | yes      |
| `ogs-9x9`     | -                            | 9x9 online games go9_20170307 (origin?)     | yes      |
| `kgs`         | 2016-01..2019-04, 2001..2015 | KGS 19x19, a 7d+ or two 6d+ players         | yes      |
| `kgs-4d`      | 2007..2015                   | KGS 19x19, both players 4d+ (yearly)        | yes      |
| path/file://  | -                            | your own folder, archive, .sgf or .sgfs     | no       |
| `data:PATH`   | -                            | a folder or file under the data dir         | no       |
| `gnugo-NxN`   | `:level=L,games=G[,seed=S]`  | GNU Go plays itself (storage.gnugo_source)  | no       |

A monthly period can also be ``last-N-months`` (for `cgos-9x9`; `kgs` lists no recent months).

URLs and file names come from public download scripts; none was fetched while this was written (the
build machine has no internet), and ``CatalogEntry.verified`` says what was checked for each. No
publisher lists sha256 checksums, so none is recorded: the first download writes its sha256 to a
sidecar and later runs verify against that.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from urllib.parse import unquote, urlparse
from urllib.request import url2pathname

from gocore.errors import GozeroError
from storage.catalog_kgs import KGS_4D_GAMES, KGS_GAMES, kgs_files
from storage.gnugo_source import is_gnugo_source, parse_gnugo_source
from storage.layout import data_dir, safe_name

_MONTH = re.compile(r"^(\d{4})-(\d{2})$")
_YEAR = re.compile(r"^(\d{4})$")
_LAST_MONTHS = re.compile(r"^last-(\d{1,3})-months?$")
DATA_PREFIX = "data:"
"""``data:PATH`` is PATH under the data dir."""
_CATALOG_FORM = re.compile(r"^[a-z0-9][a-z0-9-]*(:[^/\\]*)?$")
_UNSAFE_LABEL_CHARS = re.compile(r"[^A-Za-z0-9._=-]+")


class CatalogError(GozeroError, ValueError):
    """A source string that names nothing fetchable; `reason` says which rule it broke."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


@dataclass(frozen=True)
class CatalogEntry:
    """One named public source of game records."""

    name: str
    """What users type; also the directory name under ``<data>/raw/``."""
    description: str
    """What the games are, in a few words."""
    board_size: int
    """Board size of the games."""
    url: str
    """One URL, or a pattern with ``{year}``/``{month:02d}`` (monthly) or ``{file}`` (from `periods`)."""
    periods: Mapping[str, str] = field(default_factory=dict)
    """Period (``YYYY-MM`` or ``YYYY``) → archive file name, for sources whose names are not a pattern."""
    first_month: str | None = None
    """Earliest ``YYYY-MM`` of a monthly pattern."""
    needs_internet: bool = True
    """Whether fetching it needs the network."""
    sha256: Mapping[str, str] = field(default_factory=dict)
    """Known checksums by file name; empty where the publisher lists none (no guessed values)."""
    verified: str = ""
    """What about the URL was checked, and how."""

    @property
    def is_monthly_pattern(self) -> bool:
        """Whether file URLs come from a ``{year}_{month}`` pattern."""
        return "{year}" in self.url

    @property
    def is_single_file(self) -> bool:
        """Whether the source is one archive (no period allowed)."""
        return not self.is_monthly_pattern and not self.periods


@dataclass(frozen=True)
class RemoteFile:
    """One file to download, with what is known about it beforehand."""

    url: str
    filename: str
    sha256: str | None = None
    size: int | None = None


@dataclass(frozen=True)
class ResolvedSource:
    """What a source string means: a directory name and the files or local paths behind it."""

    name: str
    """Directory name under ``<data>/raw/``."""
    remote: tuple[RemoteFile, ...] = ()
    local: tuple[Path, ...] = ()

    @property
    def needs_internet(self) -> bool:
        """Whether fetching this source needs the network."""
        return bool(self.remote)


CATALOG: dict[str, CatalogEntry] = {entry.name: entry for entry in (
    CatalogEntry(
        name="cgos-9x9",
        description="CGOS 9x9 computer-go server: every game of one month (engines, many strong)",
        board_size=9,
        url="http://www.yss-aya.com/cgos/9x9/archives/9x9_{year}_{month:02d}.tar.bz2",
        first_month="2015-11",
        verified="pattern (note 'archives/', plural) used by several public download scripts, months "
                 "2015-11..2024-02; not fetched here; no checksums published",
    ),
    CatalogEntry(
        name="cwi-9x9",
        description="about 500 9x9 professional games (Mini-Go broadcasts, NHK, pair go, pros vs programs)",
        board_size=9,
        url="https://homepages.cwi.nl/~aeb/go/games/9x9.tgz",
        verified="URL used by several public scripts and READMEs; not fetched here; no checksum published",
    ),
    CatalogEntry(
        name="goquest-9x9",
        description="9x9 games of the top-50 players of the GoQuest app (Elo above about 2000)",
        board_size=9,
        url="https://dl.dropboxusercontent.com/s/abpzmqrw7gyvlzt/go9.tgz",
        verified="Dropbox link used by public scripts and READMEs; a personal share that may vanish; "
                 "not fetched here",
    ),
    CatalogEntry(
        name="ogs-9x9",
        description="9x9 online games dump go9_20170307_200x200 (called OGS games by one README)",
        board_size=9,
        url="https://dl.dropboxusercontent.com/s/7hzopmr000ndham/go9_20170307_200x200.zip",
        verified="UNVERIFIED provenance: a Dropbox link from one public script; not fetched here",
    ),
    CatalogEntry(
        name="kgs",
        description="KGS 19x19 games where one player is 7d+ or both are 6d+ (u-go.net high-dan archive)",
        board_size=19,
        url="https://dl.u-go.net/gamerecords/{file}",
        periods=kgs_files("KGS", KGS_GAMES, ".tar.bz2"),
        verified="file names copied from public download scripts (2001..2019-04); not fetched here; "
                 "later months: take the URL from https://u-go.net/gamerecords/",
    ),
    CatalogEntry(
        name="kgs-4d",
        description="KGS 19x19 games where both players are 4d+ (u-go.net, one archive per year)",
        board_size=19,
        url="https://dl.u-go.net/gamerecords-4d/{file}",
        periods=kgs_files("KGS4d", KGS_4D_GAMES, ".tar.gz"),
        verified="yearly file names 2007..2015 from one public script; monthly 4d archive names were not "
                 "found: take them from https://u-go.net/gamerecords-4d/",
    ),
)}


def resolve_source(text: str, data: Path | None = None, *, now: datetime | None = None) -> ResolvedSource:
    """What `text` (catalog name[:period], http(s)/file URL, local path, ``data:PATH``) fetches; else
    CatalogError. `data` is the data dir of ``data:PATH`` (default `storage.layout.data_dir()`);
    `now` the time ``last-N-months`` counts back from (default: the current UTC time)."""
    text = text.strip()
    scheme = urlparse(text).scheme.lower()
    if scheme in {"http", "https"}:
        return _resolve_url(text)
    if scheme == "file":
        return _resolve_local(Path(url2pathname(urlparse(text).path)), text)
    if is_gnugo_source(text):
        raise CatalogError("generated", f"{parse_gnugo_source(text).text!r} is played by GNU Go, not "
                                        "fetched: `gozero ingest` generates it")
    if text.startswith(DATA_PREFIX):
        path = data_path(text, data)
        if not path.exists():
            raise CatalogError("not-found", f"{text!r} is {path}, which does not exist")
        return _resolve_local(path, text)
    if _looks_like_catalog(text):
        entry, period = parse_catalog_source(text)
        return ResolvedSource(name=entry.name, remote=tuple(catalog_files(entry, period, now=now)))
    return _resolve_local(Path(text).expanduser(), text)


def data_path(text: str, data: Path | None = None) -> Path:
    """The path a ``data:PATH`` source names: PATH under `data` (default `storage.layout.data_dir()`)."""
    relative = text.strip()[len(DATA_PREFIX):].strip()
    parts = PurePosixPath(relative.replace("\\", "/")).parts
    if not parts or parts[0] == "/" or ".." in parts or re.match(r"^[A-Za-z]:", relative):
        raise CatalogError("bad-data-path", f"{text!r}: data:PATH takes a relative path inside the data dir, "
                                            "like data:inbox")
    return data_dir(data).joinpath(*parts)


def expand_sources(texts: Iterable[str], *, now: datetime | None = None) -> list[str]:
    """One source string per archive (``cgos-9x9:2023-01..2023-03`` → 3), in order, no duplicates;
    ``last-N-months`` becomes N months counted back from `now` (default: the current UTC time)."""
    units: dict[str, None] = {}
    for text in texts:
        units.update(dict.fromkeys(expand_source(text, now=now)))
    return list(units)


def expand_source(text: str, *, now: datetime | None = None) -> list[str]:
    """One source string per archive of `text`; non-catalog sources (``data:PATH`` too) are returned as
    they are, GNU Go sources in their canonical form."""
    text = text.strip()
    if is_gnugo_source(text):
        return [parse_gnugo_source(text).text]
    if (urlparse(text).scheme.lower() in {"http", "https", "file"} or text.startswith(DATA_PREFIX)
            or not _looks_like_catalog(text)):
        return [text]
    entry, period = parse_catalog_source(text)
    if entry.is_single_file:
        return [entry.name]
    return [f"{entry.name}:{key}" for key in _period_keys(entry, period, now)]


def parse_catalog_source(text: str) -> tuple[CatalogEntry, str | None]:
    """Split ``name[:period]`` into the catalog entry and the period (None when absent)."""
    name, _, period = text.strip().partition(":")
    entry = CATALOG.get(name.lower())
    if entry is None:
        known = ", ".join(sorted(CATALOG))
        raise CatalogError("unknown-source", f"unknown source {name!r}: not in the catalog ({known}), "
                                             "not a URL and not an existing file or folder")
    return entry, (period.strip() or None)


def catalog_files(entry: CatalogEntry, period: str | None, *, now: datetime | None = None) -> list[RemoteFile]:
    """The files behind `entry` for `period` (``YYYY-MM``, ``YYYY``, ``A..B``, ``last-N-months``, or None)."""
    if entry.is_single_file:
        if period is not None:
            raise CatalogError("bad-period", f"{entry.name} is a single archive; drop ':{period}'")
        return [_remote_file(entry, entry.url)]
    return [_remote_file(entry, _url_for(entry, key)) for key in _period_keys(entry, period, now)]


def label_from_name(name: str, fallback: str = "source") -> str:
    """A directory-safe label from a file or folder name (``KGS 2019.tar.bz2`` → ``KGS-2019.tar.bz2``)."""
    label = _UNSAFE_LABEL_CHARS.sub("-", name)
    label = re.sub(r"\.{2,}", ".", label).strip(".-_=")[:128]
    return safe_name(label if label and label[0].isalnum() else fallback)


def _looks_like_catalog(text: str) -> bool:
    name = text.partition(":")[0].lower()
    return name in CATALOG or (bool(_CATALOG_FORM.match(text)) and ":" in text and not Path(text).exists())


def _resolve_url(url: str) -> ResolvedSource:
    filename = unquote(urlparse(url).path.rstrip("/").rpartition("/")[2]) or "download"
    filename = label_from_name(filename, fallback="download")
    name = label_from_name(_strip_suffixes(filename))
    return ResolvedSource(name=name, remote=(RemoteFile(url, filename),))


def _resolve_local(path: Path, text: str) -> ResolvedSource:
    if not path.exists():
        known = ", ".join(sorted(CATALOG))
        raise CatalogError("not-found", f"{text!r} is not an existing file or folder, a URL, "
                                        f"or a catalog source ({known})")
    path = path.resolve()
    return ResolvedSource(name=label_from_name(_strip_suffixes(path.name), fallback="local"), local=(path,))


def _strip_suffixes(filename: str) -> str:
    for suffix in (".tar.gz", ".tar.bz2", ".tar.xz", ".sgf.gz", ".tgz", ".tbz2", ".txz", ".zip", ".tar",
                   ".sgfs", ".sgf"):
        if filename.lower().endswith(suffix) and len(filename) > len(suffix):
            return filename[: -len(suffix)]
    return filename


def _remote_file(entry: CatalogEntry, url: str) -> RemoteFile:
    filename = url.rpartition("/")[2]
    return RemoteFile(url=url, filename=filename, sha256=entry.sha256.get(filename))


def _url_for(entry: CatalogEntry, key: str) -> str:
    if entry.is_monthly_pattern:
        year, month = (int(part) for part in key.split("-"))
        return entry.url.format(year=year, month=month)
    return entry.url.format(file=entry.periods[key])


def _period_keys(entry: CatalogEntry, period: str | None, now: datetime | None = None) -> list[str]:
    if period is None:
        raise CatalogError("missing-period", f"{entry.name} needs a period, e.g. {entry.name}:"
                                             f"{_example_period(entry)}")
    keys = _parse_period(entry.name, period, now)
    if entry.is_monthly_pattern:
        keys = [month for key in keys for month in _months_of(key)]
        _check_first_month(entry, keys)
        return keys
    missing = [key for key in keys if key not in entry.periods]
    if missing:
        raise CatalogError("unknown-period", f"{entry.name} has no archive for {missing[0]} (known: "
                                             f"{_known_periods(entry)}); for newer archives pass the URL")
    return keys


def _parse_period(name: str, period: str, now: datetime | None = None) -> list[str]:
    last = _LAST_MONTHS.match(period.strip())
    if last:
        return _last_months(name, int(last.group(1)), now)
    start, dots, end = period.partition("..")
    start, end = start.strip(), (end.strip() if dots else start.strip())
    if _MONTH.match(start) and _MONTH.match(end):
        return _month_range(name, start, end)
    if _YEAR.match(start) and _YEAR.match(end):
        _check_order(name, start, end)
        return [str(year) for year in range(int(start), int(end) + 1)]
    raise CatalogError("bad-period", f"{name}:{period}: a period is YYYY-MM, YYYY, a range "
                                     "like 2023-01..2023-06 or 2010..2012, or last-N-months")


def _last_months(name: str, count: int, now: datetime | None) -> list[str]:
    """The `count` whole months before the month of `now` (UTC), oldest first."""
    if count < 1:
        raise CatalogError("bad-period", f"{name}:last-{count}-months: N must be at least 1")
    now = datetime.now(UTC) if now is None else now
    if now.tzinfo is not None:
        now = now.astimezone(UTC)
    current = now.year * 12 + now.month - 1
    return [f"{index // 12:04d}-{index % 12 + 1:02d}" for index in range(current - count, current)]


def _month_range(name: str, start: str, end: str) -> list[str]:
    first, last = _month_index(name, start), _month_index(name, end)
    _check_order(name, start, end)
    return [f"{index // 12:04d}-{index % 12 + 1:02d}" for index in range(first, last + 1)]


def _month_index(name: str, month: str) -> int:
    year, number = (int(part) for part in month.split("-"))
    if not 1 <= number <= 12:
        raise CatalogError("bad-period", f"{name}: {month} is not a month (MM is 01..12)")
    return year * 12 + number - 1


def _check_order(name: str, start: str, end: str) -> None:
    if start > end:
        raise CatalogError("bad-period", f"{name}: range {start}..{end} ends before it starts")


def _months_of(key: str) -> list[str]:
    return [f"{key}-{month:02d}" for month in range(1, 13)] if _YEAR.match(key) else [key]


def _check_first_month(entry: CatalogEntry, months: list[str]) -> None:
    if entry.first_month and months and months[0] < entry.first_month:
        raise CatalogError("unknown-period", f"{entry.name} archives start at {entry.first_month}, "
                                             f"not {months[0]}")


def _known_periods(entry: CatalogEntry) -> str:
    months = sorted(key for key in entry.periods if _MONTH.match(key))
    years = sorted(key for key in entry.periods if _YEAR.match(key))
    parts = [f"{group[0]}..{group[-1]}" for group in (months, years) if group]
    return ", ".join(parts)


def _example_period(entry: CatalogEntry) -> str:
    if entry.is_monthly_pattern:
        return "2023-01, 2023-01..2023-06 or last-12-months"
    return max(entry.periods)
