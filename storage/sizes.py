"""The board size a source, a model or a dataset names, read from its name or its small JSON file:
never through MLflow, torch or a Parquet file, so a command can check its --size before any work.

    gnugo-19x19:level=0,games=3          19   (storage.gnugo_source)
    cgos-9x9:2023-01, kgs:2019           9, 19 (the catalog entry's board_size)
    models:/gozero-13x13@champion        13   (registered names are gozero-<N>x<N>[-<family>])
    <a model directory>                  its config.json's board_size
    dataset NAME                         its manifest's options.size

Anything else (a URL, a local folder of SGF, ``models:/othername/2``) names no size: None.
`tasks.app.sizes` puts these together for player specs and turns a contradiction into one line.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from storage.catalog import CATALOG
from storage.gnugo_source import parse_gnugo_source
from storage.layout import CONFIG_FILE

MODEL_URI = re.compile(r"models:/+([^/@]+)(?:@([^/]+)|/([^/]+))")
"""``models:/NAME@ALIAS`` or ``models:/NAME/VERSION`` (storage.registry.parse_model_uri reads it too)."""
_MODEL_NAME = re.compile(r"gozero-(\d+)x(\d+)(?:-[a-z]+)?")  # storage.registry.model_name's names
_GNUGO = re.compile(r"gnugo-\d+x")  # a source; a player is gnugo or gnugo-LEVEL


def source_size(text: str) -> int | None:
    """The board size of an ingest source: a ``gnugo-NxN:...`` source's N (a malformed one raises
    GnugoSourceError), a catalog entry's; None for URLs and local files (their games say it)."""
    stripped = text.strip().lower()
    if _GNUGO.match(stripped) and not Path(text.strip()).exists():
        return parse_gnugo_source(text).size
    entry = CATALOG.get(stripped.partition(":")[0])
    return entry.board_size if entry is not None and not Path(text.strip()).exists() else None


def model_size(spec: str) -> int | None:
    """The board size of a model: from a ``models:/gozero-NxN...`` name (no registry lookup), a
    model directory's config.json, a ``file://`` artifact's; None when neither says it."""
    match = MODEL_URI.fullmatch(spec.strip())
    if match:
        name = _MODEL_NAME.fullmatch(match[1])
        return int(name[1]) if name and name[1] == name[2] else None
    path = Path(spec.removeprefix("file://")) if "://" not in spec or spec.startswith("file://") else None
    if path is None or not (path / CONFIG_FILE).is_file():
        return None
    try:
        saved = json.loads((path / CONFIG_FILE).read_text())  # storage.checkpoints.save_model's
        size = saved.get("config", {}).get("board_size")
    except (OSError, ValueError, AttributeError):
        return None  # loading the model says what is wrong with it
    return size if isinstance(size, int) else None


def dataset_size(dataset: Path) -> int | None:
    """The board size a finished dataset was encoded for (its manifest's options); None if there is
    no finished dataset there."""
    from storage import datasets  # pyarrow loads with it: only when a dataset is asked

    try:
        size = datasets.read_manifest(dataset).get("options", {}).get("size")
    except (datasets.DatasetError, OSError, ValueError, AttributeError):
        return None
    return size if isinstance(size, int) else None


_SGF_SIZE = re.compile(rb"SZ\s*\[\s*(\d+)\s*(?::\s*(\d+)\s*)?\]")
_GAME_START = re.compile(rb"\(\s*;")
SGF_DEFAULT_SIZE = 19  # FF[4]: a game without SZ is 19x19


def local_game_sizes(text: str, data: Path | None = None) -> Counter[int] | None:
    """{board size: games} of the SGF games in a local source (a folder, searched recursively, an
    SGF file or a zip/tar archive of them; ``data:PATH`` and ``file://`` too), from each game's SZ
    (19 when it has none; a rectangular board counts as -1); None for a remote, catalog or GNU Go
    source, or a path that does not exist (the ingest says what is wrong with it)."""
    path = _local_path(text, data)
    if path is None or not path.exists():
        return None
    counts: Counter[int] = Counter()
    for content in _sgf_contents(path):
        sizes = [int(width) if not height or width == height else -1 for width, height in _SGF_SIZE.findall(content)]
        games = len(_GAME_START.findall(content))
        counts.update(sizes + [SGF_DEFAULT_SIZE] * max(0, games - len(sizes)))
    return counts


def _local_path(text: str, data: Path | None) -> Path | None:
    from urllib.parse import urlparse
    from urllib.request import url2pathname

    from storage.catalog import DATA_PREFIX, data_path

    text = text.strip()
    scheme = urlparse(text).scheme.lower()
    if scheme == "file":
        return Path(url2pathname(urlparse(text).path))
    if text.startswith(DATA_PREFIX):
        return data_path(text, data)
    if scheme in {"http", "https"} or _GNUGO.match(text.lower()) and not Path(text).exists():
        return None
    return Path(text).expanduser()


def _sgf_contents(path: Path) -> Iterator[bytes]:
    """The bytes of every SGF game file in a folder (recursively), an SGF file (``.sgf.gz`` too) or
    a zip/tar archive; a file that cannot be read is left to the ingest, which reports it."""
    import gzip
    import tarfile
    import zipfile

    from storage.archives import archive_kind, sgf_suffix

    def unzipped(name: str, content: bytes) -> bytes:
        return gzip.decompress(content) if name.lower().endswith(".gz") else content

    if path.is_dir():
        for file in sorted(path.rglob("*")):
            if file.is_file() and archive_kind(file.name):
                yield from _sgf_contents(file)
        return
    kind = archive_kind(path.name)
    try:
        if kind == "zip":
            with zipfile.ZipFile(path) as archive:
                for info in archive.infolist():
                    if not info.is_dir() and sgf_suffix(info.filename):
                        yield unzipped(info.filename, archive.read(info))
        elif kind == "tar":
            with tarfile.open(path) as archive:
                for member in archive:
                    if member.isfile() and sgf_suffix(member.name) and (opened := archive.extractfile(member)):
                        yield unzipped(member.name, opened.read())
        elif kind == "sgf":
            yield unzipped(path.name, path.read_bytes())
    except (OSError, EOFError, zipfile.BadZipFile, tarfile.TarError):
        return
