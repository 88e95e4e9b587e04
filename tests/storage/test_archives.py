"""Safe, atomic extraction: formats, hostile archives, limits, reuse and crash leftovers."""

from __future__ import annotations

import gzip
import io
import os
import zipfile
from pathlib import Path

import pytest

from storage.archives import MARKER, ArchiveError, ExtractLimits, extract, extract_directory, read_marker
from tests.http_server import sgf_game, tar_bytes, zip_bytes

GAMES = {f"9x9/2023/01/{index}.sgf": sgf_game(index) for index in range(3)}
SGFS = b"(;SZ[9];B[aa])\n(;SZ[9];B[bb])\n"  # one game a line


def write(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def tree(root: Path) -> set[str]:
    return {path.relative_to(root).as_posix() for path in root.rglob("*")}


@pytest.mark.parametrize(("name", "payload"), [
    ("games.tar.bz2", tar_bytes(GAMES, "bz2")),
    ("games.tgz", tar_bytes(GAMES, "gz")),
    ("games.tar.xz", tar_bytes(GAMES, "xz")),
    ("games.tar", tar_bytes(GAMES, "")),
    ("games.zip", zip_bytes(GAMES)),
])
def test_every_archive_format_yields_its_sgf_files(tmp_path: Path, name: str, payload: bytes) -> None:
    archive = write(tmp_path / name, payload)
    result = extract(archive, tmp_path / "out" / "games", "fp-1")
    assert result.sgf_files == 3 and result.skipped == 0 and not result.reused
    for member, data in GAMES.items():
        assert (result.directory / member).read_bytes() == data
    assert read_marker(result.directory)["sgf_files"] == 3


def test_only_sgf_like_members_are_kept_and_suffixes_are_normalized(tmp_path: Path) -> None:
    members = {"a.SGF": sgf_game(1), "b.sgf.gz": gzip.compress(sgf_game(2)), "c.Sgfs": SGFS,
               "readme.txt": b"hello", "index.html": b"<html>"}
    archive = write(tmp_path / "mixed.zip", zip_bytes(members))
    result = extract(archive, tmp_path / "mixed", "fp")
    assert tree(result.directory) == {"a.sgf", "b.sgf", "c.sgfs", MARKER}
    assert (result.directory / "b.sgf").read_bytes() == sgf_game(2)
    assert (result.directory / "c.sgfs").read_bytes() == SGFS  # kept whole: the encoder splits the lines
    assert (result.sgf_files, result.skipped) == (3, 2)


def test_plain_sgf_file_is_copied(tmp_path: Path) -> None:
    result = extract(write(tmp_path / "one.sgf", sgf_game(7)), tmp_path / "out" / "one", "fp")
    assert (result.directory / "one.sgf").read_bytes() == sgf_game(7)


@pytest.mark.parametrize("evil", ["../evil.sgf", "/tmp/gozero-abs-evil.sgf", "a/../../evil.sgf",
                                  "C:/evil.sgf", "..\\evil.sgf"])
@pytest.mark.parametrize("kind", ["zip", "tar"])
def test_member_escaping_the_target_makes_the_whole_archive_unsafe(tmp_path: Path, evil: str,
                                                                   kind: str) -> None:
    files = {"good.sgf": sgf_game(1), evil: sgf_game(2)}
    archive = write(tmp_path / "in" / f"slip.{kind}", zip_bytes(files) if kind == "zip" else tar_bytes(files))
    out = tmp_path / "data" / "sgf"
    with pytest.raises(ArchiveError, match="outside the extraction directory") as error:
        extract(archive, out / "slip", "fp")
    assert error.value.reason == "unsafe-path" and error.value.member == evil
    assert not (out / "slip").exists() and list(out.iterdir()) == []  # temp dir removed too
    assert not any(path.name == "evil.sgf" for path in tmp_path.rglob("*"))
    assert not Path("/tmp/gozero-abs-evil.sgf").exists()


def test_links_are_refused_one_by_one_and_never_created(tmp_path: Path) -> None:
    tar = write(tmp_path / "links.tar.gz", tar_bytes({"ok.sgf": sgf_game(1)}, "gz",
                                                     symlinks={"passwd.sgf": "/etc/passwd"}))
    zipped = write(tmp_path / "links.zip", zip_bytes({"ok.sgf": sgf_game(1)}, symlinks={"up.sgf": "../../x"}))
    for archive in (tar, zipped):
        result = extract(archive, tmp_path / archive.name.replace(".", "-"), "fp")
        assert result.sgf_files == 1 and result.refused_count == 1
        assert result.refused[0][1] == "link"
        assert not any(path.is_symlink() for path in result.directory.rglob("*"))


def test_total_size_counts_real_decompressed_bytes_not_header_claims(tmp_path: Path) -> None:
    bomb = io.BytesIO()
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("bomb.sgf", b"(" * 5_000_000)  # ~5 kB compressed
    path = write(tmp_path / "bomb.zip", bomb.getvalue())
    assert path.stat().st_size < 50_000
    with pytest.raises(ArchiveError, match="bytes of SGF") as error:
        extract(path, tmp_path / "out" / "bomb", "fp", ExtractLimits(max_total_bytes=1_000_000))
    assert error.value.reason == "too-large"
    assert list((tmp_path / "out").iterdir()) == []


def test_entry_count_is_bounded(tmp_path: Path) -> None:
    archive = write(tmp_path / "many.tar", tar_bytes({f"{i}.sgf": b"(;)" for i in range(20)}, ""))
    with pytest.raises(ArchiveError) as error:
        extract(archive, tmp_path / "out" / "many", "fp", ExtractLimits(max_entries=10))
    assert error.value.reason == "too-many-files"


def test_damaged_archive_is_reported_as_corrupt(tmp_path: Path) -> None:
    payload = tar_bytes(GAMES, "bz2")
    archive = write(tmp_path / "cut.tar.bz2", payload[: len(payload) // 2])
    with pytest.raises(ArchiveError) as error:
        extract(archive, tmp_path / "out" / "cut", "fp")
    assert error.value.reason == "corrupt"


def test_second_extraction_with_same_fingerprint_reuses_the_directory(tmp_path: Path) -> None:
    archive = write(tmp_path / "games.tar.bz2", tar_bytes(GAMES))
    first = extract(archive, tmp_path / "out" / "games", "sha256:abc")
    stamps = {path: path.stat().st_mtime_ns for path in first.directory.rglob("*")}
    again = extract(archive, tmp_path / "out" / "games", "sha256:abc")
    assert again.reused and again.sgf_files == first.sgf_files
    assert {path: path.stat().st_mtime_ns for path in first.directory.rglob("*")} == stamps
    changed = extract(archive, tmp_path / "out" / "games", "sha256:def")
    assert not changed.reused


def test_crash_leftovers_never_look_complete_and_are_cleared(tmp_path: Path) -> None:
    out = tmp_path / "out"
    stale = write(out / ".tmp-games.partial-x1y2" / "half.sgf", b"(;")
    write(out / "games" / "orphan.sgf", b"(;")  # no marker: an interrupted swap, not a finished extraction
    assert read_marker(out / "games") is None
    result = extract(write(tmp_path / "games.zip", zip_bytes(GAMES)), out / "games", "fp")
    assert not stale.parent.exists()
    assert tree(out) == {"games", *(f"games/{name}" for name in tree(result.directory))}
    assert not (out / "games" / "orphan.sgf").exists()


def test_local_folder_collects_loose_files_and_each_archive(tmp_path: Path) -> None:
    folder = tmp_path / "mine"
    write(folder / "a.sgf", sgf_game(1))
    write(folder / "deep" / "b.SGF", sgf_game(2))
    write(folder / ".hidden.sgf", sgf_game(3))
    write(folder / "notes.txt", b"x")
    write(folder / "sub" / "more.zip", zip_bytes({"c.sgf": sgf_game(4)}))
    results = extract_directory(folder, tmp_path / "sgf")
    assert [result.directory.name for result in results] == ["mine", "sub-more"]
    assert tree(results[0].directory) == {"a.sgf", "deep", "deep/b.sgf", MARKER}
    assert tree(results[1].directory) == {"c.sgf", MARKER}
    assert all(result.reused for result in extract_directory(folder, tmp_path / "sgf"))
    write(folder / "new.sgf", sgf_game(5))
    rerun = extract_directory(folder, tmp_path / "sgf")
    assert not rerun[0].reused and rerun[0].sgf_files == 3 and rerun[1].reused


def test_unreadable_marker_means_not_done(tmp_path: Path) -> None:
    archive = write(tmp_path / "games.zip", zip_bytes(GAMES))
    result = extract(archive, tmp_path / "out" / "games", "fp")
    (result.directory / MARKER).write_text("{not json")
    assert not extract(archive, tmp_path / "out" / "games", "fp").reused
    assert os.path.isfile(result.directory / MARKER)
