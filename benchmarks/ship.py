"""Ship a measured net with gozero: copy a registered version into ``storage/shipped/gozero-<N>x<N>/``
with its provenance (the run's command, its data's content key, the CPU hours it cost, its results
against GNU Go), so a fresh install plays with it (`storage.shipped`; ``gozero play --black shipped``).

    python -m benchmarks.ship --data-dir D --model models:/gozero-9x9/7 --recipe strong-9x9 \\
        --command "gozero strong ..." --match M1 --match M2 [--out storage/shipped]

The matches (`--match`, repeatable) are the version's measured games (e.g. 200 against GNU Go
level 5); their win rates with the clustered 95 % intervals go into the provenance and the
registered version's ``strength`` tag. Replace the shipped net whenever a stronger one is measured:
the data dirs that registered the old one register the new one as their next version.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, required=True, help="the data dir of the run that made the net")
    parser.add_argument("--model", required=True, help="the registered version to ship, models:/NAME/VERSION")
    parser.add_argument("--recipe", default=None, help="the recipe run that made it (its CPU hours, its data)")
    parser.add_argument("--command", required=True, help="the command that made it, as run")
    parser.add_argument("--match", action="append", default=[], help="a match id of its measured games")
    parser.add_argument("--note", default=None, help="what the records do not say (e.g. CPU spent before they counted it)")
    parser.add_argument("--out", type=Path, default=None, help="the shipped nets' folder (default storage/shipped)")
    return parser.parse_args(argv)


def match_line(data: Path, match: str) -> dict[str, Any]:
    """One measured match as the provenance keeps it."""
    from storage import layout
    from storage.matches import read_summary

    summary = read_summary(layout.match_dir(data, match))
    if summary is None:
        raise SystemExit(f"match {match} is not complete in {data}")
    keep = ("player_a", "player_b", "games", "a_winrate", "a_winrate_low", "a_winrate_high", "elo", "distinct_games")
    return {"match": match, "sims": summary["settings"].get("sims"), **{key: summary[key] for key in keep if key in summary}}


def recipe_facts(data: Path, recipe: str, version: str) -> dict[str, Any]:
    """The recipe's settings, its expert data's content key and the CPU hours spent up to `version`."""
    from storage import layout, loops
    from storage.datasets import manifest_id, read_manifest
    from tasks.app.strong import recipe_spend

    settings = loops.read_settings(data, f"{recipe}-recipe") or {}
    records = loops.read_steps(data, f"{recipe}-recipe")
    loop = loops.read_steps(data, recipe)
    trained = [int(r["generation"]) for r in loop if r["step"] == "train" and str(r.get("candidate")) == version]
    upto = trained[0] if trained else 0
    spent = recipe_spend([*records, *[r for r in loop if int(r["generation"]) <= upto]])
    expert = f"{recipe}-expert"
    return {"recipe": recipe, "settings": settings, "generation": upto, "cpu_hours_learning": spent.learning,
            "dataset": expert, "dataset_key": manifest_id(read_manifest(layout.dataset_dir(data, expert)))}


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    sys.path.insert(0, str(ROOT))
    from storage import registry, shipped
    from storage.checkpoints import read_model_info

    name, selector = registry.parse_model_uri(args.model)
    if not selector.isdigit():
        raise SystemExit("ship a pinned version, models:/NAME/VERSION: an alias moves")
    source, label = registry.local_copy(args.model, args.data_dir)
    info = read_model_info(source)
    size = int(info["config"]["board_size"])
    matches = [match_line(args.data_dir, match) for match in args.match]
    strength = "; ".join(f"{m['a_winrate']:.1%} ({m['a_winrate_low']:.1%}-{m['a_winrate_high']:.1%}) of "
                         f"{m['games']} games vs {m['player_b']}"
                         for m in matches)
    provenance = {"model": label, "command": args.command, "strength": strength, "matches": matches,
                  **(recipe_facts(args.data_dir, args.recipe, selector) if args.recipe else {}),
                  **({"note": args.note} if args.note else {})}
    target = shipped.ship(source, size, provenance, args.out)
    weights = sum(path.stat().st_size for path in target.iterdir())
    print(f"shipped {label} as {target} ({weights / 1e6:.1f} MB): {strength or 'no matches given'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
