"""Evaluation matches on disk: games as SGF, the results table, the summary, resuming.

    <data>/matches/<match-id>/
        match.json               the settings (players, rules, games); a rerun must agree with them
        games/game-00000.sgf     each game, written when it ends
        .work/game-00000.json    its results row, written after the SGF: the game is done
        results.parquet          every finished game, one row each (storage.schemas.RESULTS_SCHEMA)
        summary.json             win rate, intervals, Elo, gate: written last, the match is complete

A game is on disk once its row is: a rerun of the same match id plays only the games without
one, so a crashed or interrupted match resumes where it stopped. Every file is written
atomically. Parallel chunks write disjoint games, so they never write the same file.

The results table's columns are `storage.schemas.RESULTS_SCHEMA`.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from gocore.errors import GozeroError
from storage import layout
from storage.atomic import atomic_path, remove_stale_temps, write_bytes, write_json
from storage.schemas import results_table

SETTINGS = "match.json"
GAMES_DIR = "games"
WORK_DIR = ".work"
RESULTS = "results.parquet"
SUMMARY = "summary.json"
# Settings a rerun may change: the number of games, and how long an engine may think (a match
# whose engine timed out can go on with a longer timeout). Anything else is another match.
RESUMABLE_CHANGES = frozenset({"games", "gtp_timeout"})
_ROW_FILE = re.compile(r"^game-(\d+)\.json$")

class MatchError(GozeroError, RuntimeError):
    """A match directory that does not fit the request (other settings, missing results)."""


def default_match_id(black: str, white: str) -> str:
    """``<A>-vs-<B>-<UTC time>``: a fresh id per run unless the caller names one to resume."""
    def slug(spec: str) -> str:
        name = spec.rstrip("/").rpartition("/")[2] or spec  # a path or URI: its last part
        return re.sub(r"[^A-Za-z0-9._=]+", "-", name).strip("-.")[:40] or "player"

    return f"{slug(black)}-vs-{slug(white)}-{time.strftime('%Y%m%dT%H%M%S', time.gmtime())}"


def game_name(index: int) -> str:
    """File stem of game `index`: ``game-00042``."""
    return f"game-{index:05d}"


def sgf_path(match: Path, index: int) -> Path:
    """Where game `index` is stored as SGF."""
    return match / GAMES_DIR / f"{game_name(index)}.sgf"


def _row_path(match: Path, index: int) -> Path:
    return match / WORK_DIR / f"{game_name(index)}.json"


def begin(match: Path, settings: Mapping[str, Any]) -> None:
    """Start or resume a match: check `settings` against match.json, write it, clear leftovers.

    Raises MatchError if the directory holds a match with other players or rules (only the
    RESUMABLE_CHANGES may differ). A summary of another number of games is removed: stale.
    """
    settings = json.loads(json.dumps(dict(settings)))  # the JSON form: tuples become lists
    path = match / SETTINGS
    if path.exists():
        stored = json.loads(path.read_text())
        changed = sorted(k for k in set(stored) | set(settings)
                         if k not in RESUMABLE_CHANGES and stored.get(k) != settings.get(k))
        if changed:
            raise MatchError(f"match {match.name} was played with other settings ({', '.join(changed)}: "
                             f"{[stored.get(k) for k in changed]} there, {[settings.get(k) for k in changed]} "
                             f"now); choose another match id")
    if not path.exists() or json.loads(path.read_text()) != settings:
        write_json(path, settings)
    for directory in (match, match / GAMES_DIR, match / WORK_DIR):
        remove_stale_temps(directory)
    summary = match / SUMMARY
    if summary.exists() and json.loads(summary.read_text()).get("games_planned") != settings.get("games"):
        summary.unlink()


def read_settings(match: Path) -> dict[str, Any]:
    """The settings a match was started with; MatchError if there is no match here."""
    path = match / SETTINGS
    if not path.exists():
        raise MatchError(f"{match} holds no match ({SETTINGS} is missing)")
    return json.loads(path.read_text())


def match_ids(data: Path, prefix: str = "") -> list[str]:
    """Ids of the matches begun in the data dir (their match.json written) starting with `prefix`, sorted."""
    root = layout.matches_root(data)
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir() if p.name.startswith(prefix) and (p / SETTINGS).is_file())


def finished_games(match: Path) -> set[int]:
    """Indices of the games on disk (their rows written)."""
    work = match / WORK_DIR
    if not work.is_dir():
        return set()
    return {int(m.group(1)) for p in work.iterdir() if (m := _ROW_FILE.match(p.name))}


def missing_games(match: Path, games: int) -> list[int]:
    """Indices below `games` not yet on disk, in order: what a (re)run still has to play."""
    done = finished_games(match)
    return [index for index in range(games) if index not in done]


def write_game(match: Path, index: int, sgf_text: str, row: Mapping[str, Any]) -> None:
    """Store one finished game: its SGF, then its row (which marks it done)."""
    write_bytes(sgf_path(match, index), sgf_text.encode("utf-8"))
    write_json(_row_path(match, index), dict(row))


def read_rows(match: Path, indices: Iterable[int] | None = None) -> list[dict[str, Any]]:
    """The rows of the finished games (or of `indices`, which must be finished), by game index."""
    chosen = sorted(finished_games(match) if indices is None else set(indices))
    return [json.loads(_row_path(match, index).read_text()) for index in chosen]


def write_results(match: Path, rows: Iterable[Mapping[str, Any]]) -> Path:
    """Write results.parquet (zstd) atomically from game rows; returns its path."""
    path = match / RESULTS
    with atomic_path(path) as temp:
        pq.write_table(results_table(rows), temp, compression="zstd")
    return path


def read_results(match: Path) -> pa.Table:
    """The results table; MatchError if the match has none yet."""
    path = match / RESULTS
    if not path.exists():
        raise MatchError(f"{match} has no {RESULTS}: the match was not finished")
    return pq.read_table(path)


def write_summary(match: Path, summary: Mapping[str, Any]) -> None:
    """Write summary.json, last: from now on the match is complete."""
    write_json(match / SUMMARY, dict(summary))


def read_summary(match: Path) -> dict[str, Any] | None:
    """The summary of a complete match, or None."""
    path = match / SUMMARY
    return json.loads(path.read_text()) if path.exists() else None


def progress(match: Path) -> tuple[int, int]:
    """(games finished, games planned) of a match, for live displays; (0, 0) before it starts."""
    path = match / SETTINGS
    if not path.exists():
        return 0, 0
    planned = int(json.loads(path.read_text()).get("games", 0))
    return sum(1 for index in finished_games(match) if index < planned), planned


def summary_rows(summary: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(measure, value) pairs of a match summary: the Markdown report's and the CLI's table."""
    s = summary

    def elo(key: str, unbounded: str) -> str:
        return unbounded if s[key] is None else f"{s[key]:+.0f}"

    stopped = " (stopped early)" if s["stopped_early"] else ""
    rows = [] if not s["disagreements"] else [
        ("WARNING", f"{s['disagreements']} of {s['external_counts']} games are counted differently by the "
                    "engine even after a cleanup phase (other rules? see each game's detail): the win "
                    "rate and Elo below rest on our Tromp-Taylor count")]
    rows += [("games", f"{s['games']} of {s['games_planned']}{stopped}"),
            ("A wins / B wins / jigo", f"{s['a_wins']} / {s['b_wins']} / {s['draws']}"),
            (f"A win rate (95 % CI{_clustered(s)})",
             f"{s['a_winrate']:.1%} ({s['a_winrate_low']:.1%} – {s['a_winrate_high']:.1%})"),
            ("Elo A − B (95 % CI)", f"{elo('elo', '+∞' if s['a_winrate'] > 0.5 else '−∞')} "
                                    f"({elo('elo_low', '−∞')} – {elo('elo_high', '+∞')})"),
            (f"gate ≥ {s['gate']:.0%}", f"{'passed' if s['gate_passed'] else 'not passed'} (by {s['gate_rule']})")]
    if s["sprt"] is not None:
        rows.append(("SPRT", s["sprt"]))
    if s.get("distinct_games") is not None:
        rows.append(("distinct games", f"{s['distinct_games']} of {s['games']}"))
    if s["external_counts"]:
        rows.append(("engine counts disagreeing", f"{s['disagreements']} of {s['external_counts']}"))
    rows += [(f"ended by {reason}", str(count)) for reason, count in sorted(s["reasons"].items())]
    return rows + [(f"why {failure} (first)", detail) for failure, detail in sorted(s.get("failure_details", {}).items())]


def _clustered(summary: Mapping[str, Any]) -> str:
    """How the interval treats correlated games, for its label ("" for Wilson's on every game)."""
    if summary.get("interval") != "clustered":
        return ""
    return f", clustered: {summary['clusters']} openings or games, ~{summary['effective_games']:.0f} effective"


def summary_markdown(summary: Mapping[str, Any]) -> str:
    """The summary as a Markdown report (a Prefect artifact)."""
    lines = [f"# Match `{summary['match_id']}`", "",
             *([f"**Warning: {summary['disagreements']} games counted differently by the engine.**", ""]
               if summary["disagreements"] else []),
             f"A = `{summary['player_a']}`, B = `{summary['player_b']}`", "", "| measure | value |", "|---|---|"]
    return "\n".join(lines + [f"| {measure} | {value} |" for measure, value in summary_rows(summary)])
