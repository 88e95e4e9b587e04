"""The Prefect Run form of every flow: each parameter described (the flow docstring's Args), and
for a flow that takes a settings dataclass each field of the settings (and of a dataclass inside
them) there, described by the docstring under its declaration, the same text `gozero ... --help`
shows (flows.cli.fields reads it from the source)."""

from __future__ import annotations

import dataclasses
import importlib
from typing import TYPE_CHECKING

import pytest

from flows.cli.fields import declared_fields

if TYPE_CHECKING:
    from prefect import Flow

FORMS = [  # flow, its settings parameter, the dataclasses the form shows (module, class)
    ("flows.selfplay:selfplay", "settings", [("tasks.app.selfplay_settings", "SelfPlaySettings")]),
    ("flows.evaluate:evaluate", "settings", [("tasks.app.evaluate", "MatchSettings"), ("gocore.play.match", "MatchConfig")]),
    ("flows.evaluate:evaluate", "sprt", [("gocore.play.ratings", "SprtConfig")]),
    ("flows.zero_loop:zero_loop", "settings", [("tasks.app.loop_settings", "LoopSettings")]),
    ("flows.main_job:main_job", "settings", [("tasks.app.loop_settings", "LoopSettings")]),
    ("flows.strong:strong", "settings", [("tasks.app.strong", "StrongSettings")]),
    ("flows.alphago:alphago", "settings", [("tasks.app.alphago_settings", "AlphaGoSettings")]),
    ("flows.ladder:ladder", "settings", [("tasks.app.ladder_settings", "LadderSettings")]),
    ("flows.champion:evaluate_champion", "settings", [("tasks.app.ladder_settings", "ChampionSettings")]),
    ("flows.train_supervised:train_supervised", "settings", [("tasks.app.supervised_settings", "SupervisedSettings")]),
    ("flows.ingest:ingest", "options", [("gocore.nn.encode", "EncodeOptions")]),
]


def flow_schema(target: str) -> dict:
    module, name = target.split(":")
    return getattr(importlib.import_module(module), name).parameters.model_dump()


@pytest.mark.parametrize("target, parameter, classes", FORMS, ids=[f"{t}.{p}" for t, p, _ in FORMS])
def test_every_setting_is_in_the_run_form_with_its_docstring(target: str, parameter: str,
                                                             classes: list[tuple[str, str]]):
    schema = flow_schema(target)
    assert classes[0][1] in str(schema["properties"][parameter])  # the parameter is the settings object
    for module, cls in classes:
        fields = declared_fields(module, cls)
        properties = schema["definitions"][cls]["properties"]
        assert set(properties) == set(fields)
        for name, field in fields.items():
            described = " ".join(properties[name].get("description", "").split())
            assert field.doc and described.startswith(field.doc), f"{cls}.{name}: {described!r}"


def every_flow() -> dict[str, Flow]:
    """Every flow defined in a module of the flows package (not the CLI), by module:name."""
    import pkgutil

    from prefect import Flow

    import flows

    found = {}
    for module in pkgutil.iter_modules(flows.__path__):
        if not module.ispkg:
            imported = importlib.import_module(f"flows.{module.name}")
            found |= {f"{imported.__name__}:{name}": value for name, value in vars(imported).items()
                      if isinstance(value, Flow) and value.fn.__module__ == imported.__name__}
    return found


def test_every_flow_describes_every_parameter_and_setting_in_its_run_form():
    """A new flow, parameter or settings field without a description fails here (issue #25)."""
    found = every_flow()
    assert {target for target, _, _ in FORMS} <= set(found)
    undescribed = []
    for target, flow in found.items():
        schema = flow.parameters.model_dump()
        undescribed += [f"{target}: {name}" for name, field in schema["properties"].items()
                        if not field.get("description")]
        undescribed += [f"{target}: {cls}.{name}" for cls, definition in schema.get("definitions", {}).items()
                        for name, field in definition.get("properties", {}).items() if not field.get("description")]
    assert undescribed == []


def test_every_deployment_in_prefect_yaml_validates_against_its_flow():
    """What `prefect deploy` records must be a valid run of the flow as it is now (a renamed or
    regrouped parameter would fail only when the schedule fires)."""
    from pathlib import Path

    import yaml

    deployments = yaml.safe_load((Path(__file__).parents[2] / "prefect.yaml").read_text())["deployments"]
    for deployment in deployments:
        path, name = deployment["entrypoint"].split(":")
        flow = getattr(importlib.import_module(path.removesuffix(".py").replace("/", ".")), name)
        parameters = deployment.get("parameters", {})
        validated = flow.validate_parameters(parameters)
        assert set(validated) >= set(parameters), deployment["name"]
        for name, value in validated.items():  # pydantic ignores unknown keys of a dataclass: check them here
            if dataclasses.is_dataclass(value):
                known = {field.name for field in dataclasses.fields(value)}
                assert set(parameters.get(name, {})) <= known, f"{deployment['name']}: {set(parameters[name]) - known}"
        for trigger in deployment.get("triggers", []):  # templated: only their names can be checked here
            assert set(trigger.get("parameters", {})) <= set(flow.parameters.properties), trigger["name"]
