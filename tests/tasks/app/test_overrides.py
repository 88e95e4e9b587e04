"""Settings from name=value text: typed by the dataclass, unknown names refused with the list."""

from __future__ import annotations

import pytest

from gocore.nn.training import TrainConfig
from tasks.app.overrides import dataclass_changes


def test_changes_are_typed_by_the_fields_annotation():
    changes = dataclass_changes(TrainConfig, ["value_weight=0.25", "lr_schedule=cosine,steps=400", "grad_clip=none",
                                              "lr_steps=0.5;0.75", "compile=yes"], split_commas=True)
    assert changes == {"value_weight": 0.25, "lr_schedule": "cosine", "steps": 400, "grad_clip": None,
                       "lr_steps": (0.5, 0.75), "compile": True}
    assert TrainConfig(**changes).value_weight == 0.25


@pytest.mark.parametrize("item, message", [("valueweight=1", "is not name=value with a field of TrainConfig: objective"),
                                           ("steps", "is not name=value"), ("steps=many", "steps must be a int"),
                                           ("compile=maybe", "compile is true or false")])
def test_a_bad_change_is_refused_with_what_is_wrong(item, message):
    with pytest.raises(ValueError, match=message):
        dataclass_changes(TrainConfig, [item])


def test_without_comma_splitting_a_value_may_hold_commas():
    from tasks.app.strong import StrongSettings

    changes = dataclass_changes(StrongSettings, ["expert=gnugo-9x9:level=1,games=800;gnugo-9x9:level=5,games=200"])
    assert changes == {"expert": ("gnugo-9x9:level=1,games=800", "gnugo-9x9:level=5,games=200")}
