"""The Gumbel root search wired through the loop: `gozero loop --search`, LoopSettings.search and
self-play batches played and recorded with it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from flows.cli import app
from storage.selfplay import shard_path
from storage.stream import BatchStream
from tasks.app.loop_settings import LoopSettings, loop_record
from tasks.app.rows import ROW_DECODER
from tasks.app.selfplay_settings import SelfPlaySettings
from tasks.selfplay import SelfPlayError, selfplay_games

TINY = {"size": 5, "komi": 2.5, "max_moves": 20}


def test_a_gumbel_batch_records_its_search_and_improved_policy_rows(data_dir: Path):
    gumbel = SelfPlaySettings("uniform", 8, search="gumbel", **TINY)
    result = selfplay_games.fn(gumbel, 2, 0, 1, str(data_dir))
    rows = list(BatchStream([shard_path(data_dir, 0, 1)], batch_size=64, decoder=ROW_DECODER, val_percent=0,
                            epochs=1, shuffle_buffer=64))
    pi = np.concatenate([batch.pi for batch in rows])  # (R, 26)
    assert len(pi) == result.rows and np.allclose(pi.sum(axis=1), 1.0, atol=1e-5)
    assert gumbel.recorded(2)["search"] == "gumbel" and "search" not in SelfPlaySettings("uniform").recorded(2)
    with pytest.raises(SelfPlayError, match="other settings"):  # the same batch under PUCT is another batch
        selfplay_games.fn(SelfPlaySettings("uniform", 8, **TINY), 2, 0, 1, str(data_dir))


def test_loop_settings_know_the_searches_and_record_gumbel_only_when_chosen():
    assert "search" not in loop_record(LoopSettings(search="puct").resolved(None))  # PUCT: recorded as loops always were
    assert loop_record(LoopSettings(search="gumbel").resolved(None))["search"] == "gumbel"
    assert loop_record(LoopSettings().resolved(None))["search"] == "gumbel"  # a new loop's default, recorded
    with pytest.raises(ValueError, match="puct, gumbel"):
        LoopSettings(search="mcts")


def test_the_loop_command_refuses_an_unknown_search_in_one_line():
    result = CliRunner().invoke(app, ["loop", "--search", "alphabeta"])
    assert result.exit_code != 0 and "'alphabeta' is not one of puct, gumbel" in result.output
