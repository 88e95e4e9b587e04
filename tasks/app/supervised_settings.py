"""What a supervised training run trains: `SupervisedSettings`, the train_supervised flow's parameter.

    settings = SupervisedSettings("gnugo-9x9", family="policy", preset="tiny", also_value=True)

The training itself is `tasks.train` (`training_config` turns the preset, steps and batch size into a
`gocore.nn.training.TrainConfig`); the flow is flows/train_supervised.py.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SupervisedSettings:
    """The dataset, the net and its schedule of a supervised training run."""

    __pydantic_config__ = {"use_attribute_docstrings": True}  # each docstring below: its field in a Prefect Run form

    dataset: str
    """The encoded dataset to learn from: <data>/datasets/<dataset> (made by the ingest flow)."""
    family: str = "policy"
    """Net family: policy (SL policy), value or dual (AlphaGo Zero)."""
    preset: str = "small"
    """Net size and training schedule: tiny, small, full, alphago (the 2016 paper's 13 layers of 192),
    or a size like b6c96 (trained with its size's schedule)."""
    steps: int | None = None
    """Optimizer steps (None: the preset's)."""
    batch_size: int | None = None
    """Rows per step (None: the preset's)."""
    also_value: bool = False
    """After a policy net, train a value net on the same dataset too (a value or dual family trains one net)."""
