"""GNU Go source strings: the grammar, its errors, the catalog's handling, and where games live."""

from __future__ import annotations

from pathlib import Path

import pytest

from storage.catalog import CatalogError, expand_sources, resolve_source
from storage.gnugo_source import (
    GnugoSource,
    GnugoSourceError,
    game_files,
    game_path,
    is_gnugo_source,
    missing_games,
    parse_gnugo_source,
    write_game,
)


def test_required_keys_and_defaults() -> None:
    assert parse_gnugo_source("gnugo-9x9:level=1,games=20") == GnugoSource(9, 1, 20, seed=0, opening=4)


def test_keys_in_any_order_with_spaces_and_capitals() -> None:
    parsed = parse_gnugo_source(" GNUGO-13x13: seed=7 , games=3,opening=0, level=10 ")
    assert parsed == GnugoSource(13, 10, 3, seed=7, opening=0)


def test_the_canonical_text_parses_back_to_the_same_source() -> None:
    source = GnugoSource(7, 0, 5, seed=3, opening=2)
    assert parse_gnugo_source(source.text) == source


def test_the_directory_name_leaves_out_the_game_count_only() -> None:
    names = {parse_gnugo_source(text).name for text in ("gnugo-9x9:level=1,games=20",
                                                          "gnugo-9x9:level=1,games=40,seed=0")}
    assert names == {"gnugo-9x9-level=1-opening=4-seed=0"}
    others = ("gnugo-9x9:level=2,games=20", "gnugo-9x9:level=1,games=20,seed=1",
              "gnugo-9x9:level=1,games=20,opening=2", "gnugo-13x13:level=1,games=20")
    assert len({parse_gnugo_source(text).name for text in others} | names) == 5


@pytest.mark.parametrize(("text", "reason", "message"), [
    ("gnugo-9x9:level=1,games=5,komi=6", "unknown-key", "unknown key 'komi'"),
    ("gnugo-9x9:level=11,games=5", "bad-level", "level 11 is outside 0..10"),
    ("gnugo-9x9:level=-1,games=5", "bad-level", "level -1 is outside 0..10"),
    ("gnugo-9x9:level=1,games=0", "bad-games", "games must be at least 1"),
    ("gnugo-9x9:level=1,games=-3", "bad-games", "games must be at least 1"),
    ("gnugo-9x9:games=5", "missing-key", "needs level="),
    ("gnugo-9x9:level=1", "missing-key", "needs games="),
    ("gnugo-9x9", "missing-key", "needs level="),
    ("gnugo-9x9:level=1,games=5,level=2", "repeated-key", "level is given twice"),
    ("gnugo-9x9:level=one,games=5", "bad-value", "level takes a whole number"),
    ("gnugo-9x9:level,games=5", "bad-value", "level takes a whole number"),
    ("gnugo-9x9:level=1,games=5,seed=-1", "bad-seed", "seed must be 0 or more"),
    ("gnugo-9x9:level=1,games=5,opening=21", "bad-opening", "opening 21 is outside 0..20"),
    ("gnugo-9x13:level=1,games=5", "bad-form", "gnugo-NxN:level=L,games=G"),
    ("gnugo-4x4:level=1,games=5", "bad-size", "board size 4 is outside 5..19"),
    ("gnugo-21x21:level=1,games=5", "bad-size", "board size 21 is outside 5..19"),
])
def test_bad_gnugo_sources_raise_a_clear_error(text: str, reason: str, message: str) -> None:
    with pytest.raises(GnugoSourceError, match=message) as caught:
        parse_gnugo_source(text)
    assert caught.value.reason == reason
    assert "\n" not in str(caught.value)


def test_expand_sources_canonicalises_gnugo_sources_and_drops_duplicates() -> None:
    units = expand_sources(["gnugo-9x9:games=2,level=1", "gnugo-9x9:level=1,games=2,seed=0", "cwi-9x9"])
    assert units == ["gnugo-9x9:level=1,games=2,seed=0,opening=4", "cwi-9x9"]


def test_expand_sources_refuses_a_malformed_gnugo_source() -> None:
    with pytest.raises(GnugoSourceError, match="level 12"):
        expand_sources(["gnugo-9x9:level=12,games=2"])


def test_resolving_a_gnugo_source_says_it_is_generated_not_fetched() -> None:
    with pytest.raises(CatalogError, match="played by GNU Go, not fetched") as caught:
        resolve_source("gnugo-9x9:level=1,games=2")
    assert caught.value.reason == "generated"


def test_an_existing_folder_named_like_a_gnugo_source_is_a_local_source(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "gnugo-9x9:mine").mkdir()
    assert not is_gnugo_source("gnugo-9x9:mine")
    assert resolve_source("gnugo-9x9:mine").local == ((tmp_path / "gnugo-9x9:mine").resolve(),)


def test_games_are_found_by_index_and_only_up_to_the_count(tmp_path: Path) -> None:
    small, large = GnugoSource(9, 1, 3), GnugoSource(9, 1, 5)
    assert missing_games(tmp_path, small) == [0, 1, 2]
    for index in (0, 2, 4):
        write_game(tmp_path, large, index, f"(;SZ[9]C[{index}])")
    assert missing_games(tmp_path, small) == [1]
    assert missing_games(tmp_path, large) == [1, 3]
    assert game_files(tmp_path, small) == [str(game_path(tmp_path, small, i)) for i in range(3)]
    assert game_path(tmp_path, small, 2).read_text() == "(;SZ[9]C[2])"
    assert game_path(tmp_path, small, 2).relative_to(tmp_path).parts[:2] == ("raw", small.name)
    assert not [p for p in game_path(tmp_path, small, 0).parent.iterdir() if p.name.startswith(".")]
