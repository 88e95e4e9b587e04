"""Board sizes come from the data: sources, model names, model directories and datasets name theirs,
and a --size that contradicts them is refused in one line (issue #28)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tasks.app.sizes import DEFAULT_SIZE, SizeError, resolve_size, size_of


@pytest.mark.parametrize(("spec", "size"), [
    ("gnugo-19x19:level=0,games=3", 19), ("gnugo-5x5:level=1,games=1", 5), ("cgos-9x9:2023-01", 9),
    ("kgs:2019", 19), ("models:/gozero-13x13@champion", 13), ("models:/gozero-7x7-policy/3", 7),
    ("alphago-10:models:/gozero-7x7-policy/1,models:/gozero-7x7-value/2", 7),
    ("random", None), ("uct-8", None), ("gnugo-5", None), ("gnugo", None), ("alphago", None),
    ("models:/my-net@champion", None), ("https://example.org/games.zip", None),
])
def test_a_source_a_model_name_or_a_player_names_its_size_or_none(spec, size):
    assert size_of(spec) == size


def test_a_model_directory_names_the_size_of_its_config(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({"config": {"family": "dual", "board_size": 13}}))
    assert size_of(str(tmp_path)) == 13 and size_of(f"file://{tmp_path}") == 13
    assert size_of(str(tmp_path / "missing")) is None


def test_a_size_given_must_agree_with_every_spec_and_none_given_takes_theirs():
    assert resolve_size(None, "gnugo-19x19:level=0,games=3") == 19
    assert resolve_size(None, "random", None, "models:/gozero-13x13@champion") == 13
    assert resolve_size(None, "random") == DEFAULT_SIZE
    assert resolve_size(5, "random", "gnugo-5x5:level=1,games=2") == 5
    with pytest.raises(SizeError, match=r"^--size 9 contradicts gnugo-19x19:level=0,games=3 \(19x19\)$"):
        resolve_size(9, "gnugo-19x19:level=0,games=3")
    with pytest.raises(SizeError, match="models:/gozero-9x9@champion .9x9. and models:/gozero-13x13/2 .13x13."):
        resolve_size(None, "models:/gozero-9x9@champion", "models:/gozero-13x13/2")


def test_a_dataset_names_the_size_in_its_manifest(tmp_path):
    (tmp_path / "expert").mkdir()
    (tmp_path / "expert" / "manifest.json").write_text(json.dumps({"options": {"size": 7}}))
    assert resolve_size(None, datasets=[tmp_path / "expert", tmp_path / "unfinished"]) == 7
    with pytest.raises(SizeError, match=r"--size 9 contradicts dataset expert \(7x7\)"):
        resolve_size(9, datasets=[tmp_path / "expert"])


def test_a_model_name_is_read_without_importing_mlflow_or_torch():
    code = ("import sys; from tasks.app.sizes import size_of; assert size_of('models:/gozero-13x13@champion') == 13; "
            "print(sorted(m for m in ('mlflow', 'torch', 'pyarrow') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "[]"
