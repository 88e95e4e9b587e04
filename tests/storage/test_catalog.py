"""Catalog parsing: source strings → files to fetch, and clear errors for bad ones."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from storage.catalog import CATALOG, CatalogError, expand_sources, label_from_name, resolve_source

CGOS = "http://www.yss-aya.com/cgos/9x9/archives/9x9_{}.tar.bz2"


def test_cgos_month_range_expands_to_one_url_per_month() -> None:
    resolved = resolve_source("cgos-9x9:2023-01..2023-03")
    assert resolved.name == "cgos-9x9"
    expected = [CGOS.format(month) for month in ("2023_01", "2023_02", "2023_03")]
    assert [file.url for file in resolved.remote] == expected
    assert [file.filename for file in resolved.remote] == ["9x9_2023_01.tar.bz2", "9x9_2023_02.tar.bz2",
                                                           "9x9_2023_03.tar.bz2"]
    assert resolved.needs_internet


def test_month_range_crosses_the_year_boundary() -> None:
    urls = [file.url for file in resolve_source("cgos-9x9:2023-11..2024-02").remote]
    assert urls == [CGOS.format(m) for m in ("2023_11", "2023_12", "2024_01", "2024_02")]


def test_a_year_of_a_monthly_source_means_its_twelve_months() -> None:
    assert len(resolve_source("cgos-9x9:2022").remote) == 12


def test_expand_sources_splits_ranges_and_drops_duplicates() -> None:
    units = expand_sources(["cgos-9x9:2023-01..2023-03", "cwi-9x9", "cgos-9x9:2023-02", "CWI-9x9",
                            "https://example.org/x.zip"])
    assert units == ["cgos-9x9:2023-01", "cgos-9x9:2023-02", "cgos-9x9:2023-03", "cwi-9x9",
                     "https://example.org/x.zip"]


def test_single_archive_source_has_one_file_and_refuses_a_period() -> None:
    assert [file.url for file in resolve_source("cwi-9x9").remote] == [
        "https://homepages.cwi.nl/~aeb/go/games/9x9.tgz"]
    with pytest.raises(CatalogError, match="single archive") as error:
        resolve_source("cwi-9x9:2023-01")
    assert error.value.reason == "bad-period"


def test_kgs_periods_map_to_published_file_names() -> None:
    month = resolve_source("kgs:2019-04").remote[0]
    assert month.url == "https://dl.u-go.net/gamerecords/KGS-2019_04-19-1255-.tar.bz2"
    year = resolve_source("kgs-4d:2015").remote[0]
    assert year.url == "https://dl.u-go.net/gamerecords-4d/KGS4d-2015-19-92593-.tar.gz"
    assert len(resolve_source("kgs:2010..2012").remote) == 3


def test_kgs_unknown_month_says_to_pass_the_url() -> None:
    with pytest.raises(CatalogError, match="pass the URL") as error:
        resolve_source("kgs:2019-05")
    assert error.value.reason == "unknown-period"


@pytest.mark.parametrize(("text", "reason", "message"), [
    ("cgos-9x9", "missing-period", "needs a period"),
    ("cgos-9x9:2023-13", "bad-period", "not a month"),
    ("cgos-9x9:2023-03..2023-01", "bad-period", "ends before it starts"),
    ("cgos-9x9:23-01", "bad-period", "YYYY-MM"),
    ("cgos-9x9:2023..2023-05", "bad-period", "YYYY-MM"),
    ("cgos-9x9:2010-01", "unknown-period", "start at 2015-11"),
    ("nosuch:2020-01", "unknown-source", "not in the catalog"),
    ("cgos-9x10", "not-found", "not an existing file"),
])
def test_bad_source_strings_raise_a_clear_error(text: str, reason: str, message: str) -> None:
    with pytest.raises(CatalogError, match=message) as error:
        resolve_source(text)
    assert error.value.reason == reason


def test_every_entry_has_a_url_a_verification_note_and_no_invented_checksum() -> None:
    for entry in CATALOG.values():
        assert entry.url.startswith(("http://", "https://")), entry.name
        assert entry.verified, entry.name
        assert entry.needs_internet, entry.name
        assert not entry.sha256, f"{entry.name}: checksums must come from the publisher"


def test_http_url_source_is_named_after_its_file() -> None:
    resolved = resolve_source("https://example.org/games/My%20Games.tar.gz?dl=1")
    assert resolved.name == "My-Games"
    assert resolved.remote[0].filename == "My-Games.tar.gz"


def test_file_url_and_local_path_resolve_to_the_same_local_source(tmp_path: Path) -> None:
    folder = tmp_path / "my games"
    folder.mkdir()
    by_path, by_url = resolve_source(str(folder)), resolve_source(folder.as_uri())
    assert by_path == by_url
    assert by_path.local == (folder.resolve(),) and by_path.name == "my-games"
    assert not by_path.needs_internet


def test_label_from_name_makes_directory_safe_names() -> None:
    assert label_from_name("KGS 2019 (all).tar.bz2") == "KGS-2019-all-.tar.bz2"
    assert label_from_name("..") == "source"
    assert label_from_name("a..b") == "a.b"


MID_MARCH_2026 = datetime(2026, 3, 15, 12, 0, tzinfo=UTC)


def test_last_n_months_are_the_whole_months_before_now_in_utc() -> None:
    months = expand_sources(["cgos-9x9:last-12-months"], now=MID_MARCH_2026)
    assert months == expand_sources(["cgos-9x9:2025-03..2026-02"])
    assert expand_sources(["cgos-9x9:last-1-month"], now=datetime(2026, 1, 1, tzinfo=UTC)) == [
        "cgos-9x9:2025-12"]
    # 23:30 on 31 January in UTC-5 is already February in UTC: January counts as a whole month.
    late_january = datetime(2026, 1, 31, 23, 30, tzinfo=timezone(timedelta(hours=-5)))
    assert expand_sources(["cgos-9x9:last-2-months"], now=late_january) == [
        "cgos-9x9:2025-12", "cgos-9x9:2026-01"]


def test_last_n_months_resolve_to_files_and_keep_the_catalog_rules() -> None:
    urls = [file.url for file in resolve_source("cgos-9x9:last-3-months", now=MID_MARCH_2026).remote]
    assert urls == [CGOS.format(m) for m in ("2025_12", "2026_01", "2026_02")]
    with pytest.raises(CatalogError, match="start at 2015-11") as error:
        resolve_source("cgos-9x9:last-12-months", now=datetime(2016, 3, 1, tzinfo=UTC))
    assert error.value.reason == "unknown-period"
    with pytest.raises(CatalogError, match="at least 1"):
        resolve_source("cgos-9x9:last-0-months", now=MID_MARCH_2026)
    with pytest.raises(CatalogError, match="pass the URL"):
        resolve_source("kgs:last-2-months", now=MID_MARCH_2026)


def test_last_n_months_default_to_the_current_utc_month() -> None:
    now = datetime.now(UTC)
    previous = (now.year * 12 + now.month - 2)
    assert expand_sources(["cgos-9x9:last-1-month"]) == [f"cgos-9x9:{previous // 12:04d}-{previous % 12 + 1:02d}"]


def test_data_sources_are_paths_under_the_data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    inbox = tmp_path / "data" / "inbox"
    inbox.mkdir(parents=True)
    resolved = resolve_source("data:inbox", tmp_path / "data")
    assert resolved.local == (inbox.resolve(),) and resolved.name == "inbox"
    assert not resolved.needs_internet
    monkeypatch.setenv("GOZERO_DATA", str(tmp_path / "data"))  # no data dir given: $GOZERO_DATA
    assert resolve_source("data:inbox") == resolved
    nested = tmp_path / "data" / "selfplay" / "gen=0" / "games"
    nested.mkdir(parents=True)
    assert resolve_source("data:selfplay/gen=0/games").local == (nested.resolve(),)
    # Expanded as they are: the data dir is read when the source is fetched, not when it is listed.
    assert expand_sources(["data:inbox", "data:inbox"]) == ["data:inbox"]


@pytest.mark.parametrize(("text", "reason"), [
    ("data:", "bad-data-path"), ("data:/etc", "bad-data-path"), ("data:../outside", "bad-data-path"),
    ("data:inbox/../../x", "bad-data-path"), ("data:missing", "not-found"),
])
def test_bad_data_sources_raise_a_clear_error(tmp_path: Path, text: str, reason: str) -> None:
    with pytest.raises(CatalogError) as error:
        resolve_source(text, tmp_path)
    assert error.value.reason == reason
    if reason == "not-found":
        assert str(tmp_path / "missing") in str(error.value)
