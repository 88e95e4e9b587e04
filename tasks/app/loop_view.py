"""The zero loop's read model: what its step records (storage.loops) say, for the live view, the
summary, the flow's budget and promotion evidence, and the benchmarks' learning curves.

    rows = generation_rows(loops.read_steps(data, "zero-9x9"))   # one GenerationRow per generation
    loop_spend(loops.read_steps(data, "zero-9x9"), 3)             # games, wall and CPU minutes up to 3
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

STEPS = ("start", "selfplay", "train", "gate", "promote", "calibrate", "ladder")
"""The steps every generation records, in order."""
STEP_ORDER = ("start", "selfplay", "reanalyse", "train", "gate", "promote", "calibrate", "ladder")
"""Every step a generation may record, in order: `STEPS` and the ones only some loops run
(reanalyse: with `LoopSettings.reanalyse` on)."""


@dataclass(frozen=True)
class GenerationRow:
    """One generation of the loop as the live view and the summary show it."""

    generation: int
    champion: str  # the version that played self-play
    games: int  # self-play games
    rows: int  # self-play rows
    loss: float | None  # final training loss
    val_top1: float | None  # validation policy top-1 against the row's target's most likely move
    val_mse: float | None  # validation value MSE
    candidate: str | None  # the version trained
    gate: str  # "passed 62.5 % of 40", "failed ...", "off", or "" before the gate
    promoted: bool | None  # None until the promote step has run
    minutes: float  # wall time of the steps finished so far
    step: str  # the last finished step
    elo: str = ""  # the new champion's ladder Elo ± its 95 % interval's half-width, once rated


@dataclass(frozen=True)
class LoopSummary:
    """Where the loop stands."""

    loop: str
    champion: str | None
    generations: tuple[GenerationRow, ...]


def loop_spend(records: list[dict[str, Any]], generation: int) -> dict[str, Any]:
    """What the loop has spent on learning up to `generation` (its recorded steps but the ladder's,
    which only measure): self-play games, wall minutes and CPU minutes, the x axes of its learning
    curves (version tags ``selfplay_games_total``, ``loop_minutes``, ``loop_cpu_minutes``)."""
    mine = [r for r in records if int(r["generation"]) <= generation and r["step"] != "ladder"]
    spent = {"selfplay_games_total": sum(int(r.get("games", 0)) for r in mine if r["step"] == "selfplay"),
             "loop_minutes": round(sum(float(r.get("seconds", 0.0)) for r in mine) / 60, 2)}
    if mine and all("cpu_seconds" in r for r in mine):  # steps recorded before it was measured have none
        spent["loop_cpu_minutes"] = round(sum(float(r["cpu_seconds"]) for r in mine) / 60, 2)
    return spent


def is_cpu_spent(records: list[dict[str, Any]], generation: int, cpu_hours: float) -> bool:
    """Whether `generation` may not start, by a loop's step records: it has no step yet and the
    loop's learning so far (its steps' CPU but the ladder's, `loop_spend`) has reached `cpu_hours`.
    A begun generation is finished."""
    if any(int(r["generation"]) == generation for r in records):
        return False
    return loop_spend(records, generation).get("loop_cpu_minutes", 0.0) / 60 >= cpu_hours


def last_generation_minutes(records: list[dict[str, Any]], generation: int) -> float:
    """Wall minutes of learning the newest generation before `generation` took (0 if none)."""
    before = [int(r["generation"]) for r in records if 0 < int(r["generation"]) < generation]
    if not before:
        return 0.0
    last = max(before)
    return sum(float(r.get("seconds", 0.0)) for r in records
               if int(r["generation"]) == last and r["step"] != "ladder") / 60


def generation_rows(records: list[dict[str, Any]]) -> list[GenerationRow]:
    """One row per generation with a record, from the step records (storage.loops.read_steps)."""
    by_generation: dict[int, dict[str, dict[str, Any]]] = {}
    for record in records:
        by_generation.setdefault(int(record["generation"]), {})[record["step"]] = record
    return [_row(generation, steps) for generation, steps in sorted(by_generation.items())]


def _row(generation: int, steps: dict[str, dict[str, Any]]) -> GenerationRow:
    start, played = steps.get("start", {}), steps.get("selfplay", {})
    trained, gate, promote = steps.get("train", {}), steps.get("gate"), steps.get("promote")
    rated = steps.get("ladder", {})
    metrics = trained.get("metrics", {})
    champion_ref = start.get("champion") or {}
    verdict = "" if gate is None else "off" if gate["rule"] == "off" else (
        f"{'passed' if gate['passed'] else 'failed'} {gate['win_rate']:.0%} of {gate['games']}")
    last = [name for name in STEP_ORDER if name in steps]
    return GenerationRow(
        generation=generation, champion=f"{champion_ref.get('name', '?')}/{champion_ref.get('version', '?')}",
        games=int(played.get("games", 0)), rows=int(played.get("rows", 0)),
        loss=metrics.get("train/loss"), val_top1=metrics.get("val/policy_top1"), val_mse=metrics.get("val/value_mse"),
        candidate=None if "candidate" not in trained else str(trained["candidate"]), gate=verdict,
        promoted=None if promote is None else bool(promote["promoted"]),
        minutes=round(sum(float(s.get("seconds", 0.0)) for s in steps.values()) / 60, 2),
        step=last[-1] if last else "",
        elo="" if rated.get("elo") is None else f"{rated['elo']:+.0f}" + (
            f" ± {1.96 * rated['elo_stderr']:.0f} (95 %)" if rated.get("elo_stderr") else ""))


def step_news(record: dict[str, Any], generation: dict[str, dict[str, Any]]) -> str | None:
    """What finished step `record` adds, as a log reader wants it in a line of its own; None when it
    adds nothing new (the start, a gate that is off, a promotion the gate already decided, a resign
    threshold unchanged, no ladder games). `generation`: every step record of its generation so far."""
    step = record["step"]
    if step == "selfplay":
        return f"{int(record['games']):,} games, {int(record['rows']):,} rows, mean length {record.get('mean_length', '?')}"
    if step == "reanalyse":
        return (f"{int(record['rows']):,} rows searched again ({int(record['expert']):,} expert and "
                f"{int(record['selfplay']):,} self-play positions drawn)") if record.get("rows") else None
    if step == "train":
        metrics = record.get("metrics", {})
        shown = [f"{name} {metrics[key]:.4f}" for key, name in
                 (("train/loss", "loss"), ("val/policy_top1", "val top1"), ("val/value_mse", "val mse")) if key in metrics]
        return ", ".join([f"candidate {record['candidate']}", *shown])
    if step == "gate":
        if record["rule"] == "off":
            return None
        share = "" if record.get("win_rate") is None else f"{record['win_rate']:.1%} of "
        return f"{share}{record['games']} games ({record['rule']} rule): {'passed' if record['passed'] else 'failed'}"
    if step == "promote":
        gate = generation.get("gate", {})
        return f"champion {record['champion']}" if record["promoted"] and gate.get("rule") != "off" else None
    if step == "calibrate":
        before = generation.get("start", {}).get("resign_threshold")
        after = record.get("resign_threshold")
        return None if before is None or after is None or after == before else f"resign threshold {before:.3f} -> {after:.3f}"
    if step == "ladder" and record.get("played") and record.get("elo") is not None:
        stderr = record.get("elo_stderr")
        return f"Elo {record['elo']:+.0f}" + (f" ± {1.96 * stderr:.0f} (95 %)" if stderr else "")
    return None


def generation_line(row: GenerationRow, records: dict[str, dict[str, Any]]) -> str:
    """A finished generation in one line: who played, what it made, the verdict, the time spent."""
    cpu = sum(float(r.get("cpu_seconds", 0.0)) for r in records.values()) / 60
    verdict = {"": "", "off": "gate off"}.get(row.gate, f"gate {row.gate}")
    figures = [f"champion {row.champion}", f"{row.games:,} games", f"{row.rows:,} rows",
               f"candidate {row.candidate}" if row.candidate else "", verdict,
               "promoted" if row.promoted else "kept the champion" if row.promoted is False else "",
               f"Elo {row.elo}" if row.elo else "", f"{row.minutes:.1f} min ({cpu:.1f} CPU min)"]
    return f"gen {row.generation} done: " + ", ".join(figure for figure in figures if figure)


def is_generation_done(step: str) -> bool:
    """Whether `step` is a generation's last."""
    return step == STEPS[-1]
