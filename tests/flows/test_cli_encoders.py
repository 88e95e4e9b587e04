"""Every registered feature encoder is named where the CLI asks for one, and a net-size preset
(the AlphaGo paper's, or a custom b<blocks>c<filters>) is accepted where training asks for one."""

from __future__ import annotations

import typing

import pytest

from flows.cli import root as cli
from gocore.nn import features, nets, training
from gocore.nn.training import TrainError
from tasks.train import training_config


def test_ingest_help_lists_every_encoder():
    help_text = typing.get_type_hints(cli.ingest, include_extras=True)["encoder"].__metadata__[0].help
    for name in features.ENCODERS:
        assert name in help_text, f"gozero ingest --encoder help does not name {name}"


@pytest.mark.parametrize(("name", "schedule"), [("alphago", "full"), ("b6c96", "small"), ("tiny", "tiny")])
def test_net_presets_train_with_their_sizes_schedule(name, schedule):
    config = training_config(name, steps=7)
    assert config.steps == 7 and config.lr == training.PRESETS[schedule].lr
    assert nets.net_size(name).schedule == schedule


def test_an_unknown_preset_names_the_known_ones_and_the_custom_form():
    with pytest.raises(TrainError, match="unknown preset 'huge'.*alphago.*b6c96"):
        training_config("huge")
