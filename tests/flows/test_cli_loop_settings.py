"""Every loop setting is reachable from `gozero loop`, documented once, and the named settings are the
ones gozero run and prefect.yaml use."""

from __future__ import annotations

import dataclasses
import typing
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from flows.cli import app
from flows.cli import loop as loop_cli
from gocore.nn.net_sizes import net_size
from tasks.app.loop_presets import LOOP_PRESETS, loop_preset, main_job_settings
from tasks.app.loop_settings import LoopSettings

ROOT = Path(__file__).resolve().parents[2]
TEXTS = {"loop": "x", "preset": "small", "gate": "fixed", "search": "puct", "warm_start": "models:/x/1",
         "encoder": "tactical", "expert": "ds", "lr_schedule": "cosine", "train_from": "latest"}
NEEDS = {"forced_playouts": ("--set", "search=puct")}  # forced playouts are refused with Gumbel, the default


def other_value(field: dataclasses.Field) -> object:
    """A valid value of `field` that is not its default."""
    kind = typing.get_type_hints(LoopSettings)[field.name]
    base = next(arg for arg in typing.get_args(kind) if arg is not type(None)) if typing.get_args(kind) else kind
    if field.name in TEXTS:
        return TEXTS[field.name]
    if base is bool:
        return not field.default if field.default is not None else True
    if base is int:
        return 3 if field.default is None else field.default + 1
    return field.default / 2 if field.default else 0.5


@pytest.fixture
def captured(monkeypatch) -> list[LoopSettings]:
    seen: list[LoopSettings] = []

    def run_live(settings, *args, **kwargs):
        seen.append(settings)
        return type("Summary", (), {"champion": None})()

    monkeypatch.setattr(loop_cli, "run_live", run_live)
    return seen


def run(*args: str) -> None:
    result = CliRunner().invoke(app, ["loop", *args])
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize("field", dataclasses.fields(LoopSettings), ids=lambda field: field.name)
def test_every_field_is_reachable_with_set_and_with_its_option(field, captured):
    value, needs = other_value(field), NEEDS.get(field.name, ())
    run("--set", f"{field.name}={value}", *needs)
    assert getattr(captured[-1], field.name) == value
    if field.name in loop_cli.OPTIONS:
        flag = "--" + field.name.replace("_", "-")
        run(*([f"--{'' if value else 'no-'}{field.name.replace('_', '-')}"] if isinstance(value, bool)
              else [flag, str(value)]), *needs)
        assert getattr(captured[-1], field.name) == value


def test_the_help_documents_every_field_with_its_docstring():
    help_text = " ".join(CliRunner().invoke(app, ["loop", "--help"], terminal_width=400).output.split())
    for field in dataclasses.fields(LoopSettings):
        declared = loop_cli.LOOP[field.name]
        assert declared.doc and " ".join(declared.doc.split()[:6]) in help_text, field.name
        assert (field.name in loop_cli.OPTIONS) or f"{field.name} (default" in help_text


def test_named_settings_start_the_loop_and_options_change_them(captured):
    run("--settings", "run-9x9")
    assert captured[-1] == main_job_settings()
    run("--settings", "run-9x9", "--games", "5", "--set", "seed=4")
    assert captured[-1] == dataclasses.replace(main_job_settings(), games=5, seed=4)
    run("--size", "7")
    assert captured[-1].loop == "zero-7x7" and captured[-1].size == 7
    result = CliRunner().invoke(app, ["loop", "--settings", "huge-9x9"])
    assert result.exit_code == 1 and "zero-9x9, run-9x9, quick-5x5" in result.output


def test_the_deployment_runs_the_named_zero_9x9_settings():
    deployments = yaml.safe_load((ROOT / "prefect.yaml").read_text())["deployments"]
    (zero,) = [item for item in deployments if item["name"] == "zero-9x9"]
    assert LoopSettings(**zero["parameters"]["settings"]) == loop_preset("zero-9x9")
    assert set(LOOP_PRESETS) == set(loop_cli.NAMED)


def test_every_alphago_setting_is_reachable_with_set_or_its_option():
    from flows.cli import alphago as alphago_cli
    from tasks.app.alphago_settings import AlphaGoSettings

    help_text = " ".join(CliRunner().invoke(app, ["alphago", "--help"], terminal_width=400).output.split())
    for field in dataclasses.fields(AlphaGoSettings):
        assert field.name in alphago_cli.OPTIONS or f"{field.name} (default" in help_text, field.name
    settings = alphago_cli._settings("tiny", 9, "d", "n", {}, ["komi=6.5", "rl_lr=0.002", "baseline=none",
                                                                "max_u=30", "seed=3", "gnugo_levels=1;5"])
    assert (settings.komi, settings.rl_lr, settings.baseline, settings.max_u, settings.seed) == (6.5, 0.002, "none", 30, 3)
    assert settings.gnugo_levels == (1, 5) and settings.sl_steps == 40  # the tiny preset under the changes


def test_alphagos_full_preset_is_the_papers_nets_and_net_overrides_any_preset():
    from flows.cli import alphago as alphago_cli
    from gocore.nn import training
    from tasks.app.alphago_settings import PRESETS, AlphaGoSettings

    full = PRESETS["full"]
    assert (net_size(full.preset).blocks, net_size(full.preset).filters) == (11, 192)  # 13 layers of 192
    assert full.train_config(10, "cpu").lr == training.PRESETS["full"].lr  # the size's own schedule
    paper_tiny = alphago_cli._settings("tiny", 9, "d", "n", {"preset": "alphago"}, [])
    assert (paper_tiny.preset, paper_tiny.sl_steps) == ("alphago", 40)  # the tiny counts, the paper's nets
    assert AlphaGoSettings(preset="b3c32").train_config(5, "cpu").lr == training.PRESETS["small"].lr
    with pytest.raises(ValueError, match="'huge' is not a net size.*b11c128"):
        AlphaGoSettings(preset="huge")


def test_alphago_ingests_its_source_with_the_papers_planes_unless_told(monkeypatch, tmp_path):
    import contextlib

    from flows import ingest as ingest_flow
    from flows import runtime
    from flows.cli import alphago as alphago_cli

    asked: list = []
    monkeypatch.setattr(runtime, "prefect_api", contextlib.nullcontext)
    monkeypatch.setattr(ingest_flow, "run_ingest", lambda source, name, data, options, **kw: asked.append(options))
    monkeypatch.setattr(alphago_cli, "_run_live", lambda *args: type("Summary", (), {"table": None})())
    for extra in ([], ["--encoder", "tactical"]):
        result = CliRunner().invoke(app, ["alphago", "--source", "gnugo-5x5:level=0,games=2", "--data-dir",
                                          str(tmp_path), *extra])
        assert result.exit_code == 0, result.output
    assert [options.encoder for options in asked] == ["alphago48", "tactical"]
    result = CliRunner().invoke(app, ["alphago", "--source", "gnugo-5x5:level=0,games=2", "--encoder", "nope",
                                      "--data-dir", str(tmp_path)])
    assert result.exit_code == 1 and "nope" in result.output


@pytest.mark.parametrize(("command", "module", "cls", "fields"), [
    ("ladder", "tasks.app.ladder_settings", "LadderSettings", ("games_per_opponent", "opponents", "sims")),
    ("train", "tasks.app.supervised_settings", "SupervisedSettings", ("dataset", "family", "preset", "steps",
                                                                     "batch_size")),
])
def test_ladder_and_train_options_read_their_help_from_the_settings_docstrings(command, module, cls, fields):
    from flows.cli.fields import declared_fields

    help_text = " ".join(CliRunner().invoke(app, [command, "--help"], terminal_width=400).output.split())
    for name in fields:
        doc = declared_fields(module, cls)[name].doc.replace("``", "'")
        assert doc and " ".join(doc.split()[:8]) in help_text, name


def test_ladder_play_leaves_unset_options_to_the_settings_defaults(monkeypatch, tmp_path):
    from flows import ladder as ladder_flow
    from tasks.app.ladder_settings import LadderSettings

    seen: list = []

    def run_ladder(settings, player, data, **kwargs):
        seen.append(settings)
        return type("Result", (), {"rows": []})()

    monkeypatch.setattr(ladder_flow, "run_ladder", run_ladder)
    for extra in ([], ["--sims", "7", "--opponents", "2"]):
        result = CliRunner().invoke(app, ["ladder", "--play", "--data-dir", str(tmp_path), *extra])
        assert result.exit_code == 0, result.output
    defaults = LadderSettings(size=9)
    assert [(s.games_per_opponent, s.opponents, s.sims) for s in seen] == [
        (defaults.games_per_opponent, defaults.opponents, defaults.sims), (defaults.games_per_opponent, 2, 7)]
