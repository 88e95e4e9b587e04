"""Generation 0 of the zero loop from a warm start net: the given weights, registered and promoted
with reason ``warm-start``; a net of another kind refused in one line; loops sharing a data dir
keep their own champions."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import torch

from gocore.nn.features import get_encoder
from gocore.nn.nets import build_net, preset
from storage import registry
from storage.checkpoints import save_model
from tasks.app.loop_settings import LoopSettings, loop_record
from tasks.app.models import load_net
from tasks.zero import WarmStartError, champion, initial_champion

PLANES = get_encoder("agz17").num_planes


def saved_net(path: Path, seed: int, size: int = 5, family: str = "dual", net_preset: str = "tiny",
              aux_heads: bool = False) -> Path:
    """A model directory holding a seeded net (other seeds, other weights)."""
    torch.manual_seed(seed)
    config = preset(net_preset, size, PLANES, family=family, encoder="agz17", aux_heads=aux_heads)
    return save_model(path, build_net(config), config.to_dict())


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One data dir with its own MLflow store, as a user's loops have (each test its own loops)."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
        yield tmp_path_factory.mktemp("warm") / "data"


def versions(store: Path) -> int:
    return len(registry.list_versions("gozero-5x5", store)) if registry.list_models(5, store) else 0


def settings(**changes) -> LoopSettings:
    """A new loop's settings, its techniques decided as the flow decides them."""
    return LoopSettings(**{"loop": "warm-5x5", "size": 5, "generations": 1, "games": 2, "sims": 4,
                           **changes}).resolved(None)


def test_generation_0_of_a_warm_started_loop_has_the_given_weights(store: Path, tmp_path: Path):
    source = saved_net(tmp_path / "sl", seed=123)
    warm = settings(warm_start=str(source), aux_heads=False)  # the source's own heads: every weight is given
    made = initial_champion.fn(warm, str(store))
    version = registry.describe(made.name, made.version, store)
    assert version.tags["promotion_reason"] == "warm-start" and version.tags["generation"] == "0"
    assert version.tags["warm_start"] == str(source) and registry.CHAMPION in version.aliases
    given, registered = load_net(source).state_dict(), load_net(made.uri, store).state_dict()
    assert given.keys() == registered.keys()
    assert all(torch.equal(given[key], registered[key]) for key in given)
    random_start = initial_champion.fn(settings(loop="scratch-5x5"), str(store))  # tabula rasa beside it
    random_weights = load_net(random_start.uri, store).state_dict()
    assert not torch.equal(random_weights["stem.0.weight"], given["stem.0.weight"])
    assert registry.describe(random_start.name, random_start.version, store).tags["promotion_reason"] == "initial"
    # each loop keeps its own champion, though the registry alias moved to the newest promotion
    assert champion(warm, store) == made
    before = versions(store)
    assert initial_champion.fn(warm, str(store)) == made  # a rerun: the same
    assert versions(store) == before


def test_a_loop_with_auxiliary_heads_starts_from_a_net_without_them(store: Path, tmp_path: Path):
    source = saved_net(tmp_path / "sl", seed=5)
    made = initial_champion.fn(settings(loop="aux-5x5", aux_heads=True, warm_start=str(source)), str(store))
    registered = load_net(made.uri, store)
    assert registered.config.aux_heads and registered.ownership_head is not None
    given = load_net(source).state_dict()
    assert torch.equal(registered.state_dict()["value_head.fc2.weight"], given["value_head.fc2.weight"])


def test_a_supervised_net_with_auxiliary_heads_gives_the_loop_its_trained_heads_too(store: Path, tmp_path: Path):
    source = saved_net(tmp_path / "sl-aux", seed=6, aux_heads=True)
    made = initial_champion.fn(settings(loop="aux-aux-5x5", aux_heads=True, warm_start=str(source)), str(store))
    registered, given = load_net(made.uri, store).state_dict(), load_net(source).state_dict()
    assert set(registered) == set(given) and all(torch.equal(registered[k], given[k]) for k in given)


def test_a_net_of_another_kind_or_a_missing_one_is_refused_in_one_line(store: Path, tmp_path: Path):
    before = versions(store)
    for kind, expected in [({"family": "policy"}, "family 'policy'"), ({"size": 7}, "board_size 7"),
                           ({"net_preset": "small"}, "blocks 6, filters 64, value_hidden 256")]:
        source = saved_net(tmp_path / str(expected), seed=1, **kind)
        with pytest.raises(WarmStartError, match=expected) as refused:
            initial_champion.fn(settings(loop="refused-5x5", warm_start=str(source)), str(store))
        assert "\n" not in str(refused.value) and "dual net" in str(refused.value)
    with pytest.raises(WarmStartError, match="warm start models:/gozero-5x5/99: .*model registry"):
        initial_champion.fn(settings(loop="refused-5x5", warm_start="models:/gozero-5x5/99"), str(store))
    assert versions(store) == before  # nothing registered


def test_loop_json_records_warm_start_only_when_set():
    assert "warm_start" not in loop_record(settings())
    assert loop_record(settings(warm_start="models:/gozero-5x5/1"))["warm_start"] == "models:/gozero-5x5/1"


def test_the_cli_refuses_a_policy_net_in_one_line(store: Path, tmp_path: Path, prefect_harness):
    from typer.testing import CliRunner

    from flows.cli import app

    source = saved_net(tmp_path / "policy", seed=1, family="policy")
    result = CliRunner().invoke(app, ["loop", "--size", "5", "--generations", "1", "--games", "2", "--loop", "cli-5x5",
                                      "--warm-start", str(source), "--data-dir", str(store)],
                                env={"MLFLOW_TRACKING_URI": ""})
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert "warm start" in result.output and "family 'policy'" in result.output
