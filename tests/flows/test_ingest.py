"""The ingest flow end to end, once per session, on a tiny mixed corpus over a crashed earlier build.

The module fixture leaves a build that crashed part-way (two shards encoded through `task.fn`,
the second without its stats, temp files of unfinished writes), then runs the real flow twice
under the Prefect test harness with a process pool of two workers: the first run must complete
the dataset exactly, the second must find nothing to do.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from types import SimpleNamespace

import polars as pl
import pyarrow.parquet as pq
import pytest

from flows.ingest import dataset_progress, run_ingest
from flows.runtime import artifact_key
from gocore.nn import features
from gocore.nn.encode import EncodeOptions
from gocore.rules.sgf import write
from storage import datasets, layout, schemas
from storage.atomic import TEMP_PREFIX
from tasks.download import download_source
from tasks.encode import encode_shard, plan_shards
from tests.corpus import (
    Corpus,
    agent_records,
    assert_rows_match_games,
    files_of,
    gnugo_records,
    mixed_corpus,
    position_keys,
    read_rows,
)

NAME = "mixed"
TARGET_ROWS = 3000  # a few files per shard: several shards for two workers, duplicates across shards


def crash_part_way(source: Path, data: Path, options: EncodeOptions) -> list:
    """What a build killed during its encode step leaves behind; returns its plan."""
    roots = download_source.fn(str(source), str(data))["sgf_dirs"]
    dataset = layout.dataset_dir(data, NAME)
    plan = plan_shards.fn(roots, str(data / "raw"), str(dataset), options, TARGET_ROWS)
    for spec in plan[:2]:
        encode_shard.fn(spec, str(dataset), options)
    work = datasets.work_dir(dataset)
    (work / f"stats-{plan[1].key}.json").unlink()  # killed between the shard and its stats
    (dataset / f"{TEMP_PREFIX}shard-00002-{plan[2].key[:8]}.parquet.k1ll").write_bytes(b"PAR1 cut off")
    (work / f"{TEMP_PREFIX}quarantine-{plan[2].key}.parquet.k1ll").write_bytes(b"PAR1")
    return plan


@pytest.fixture(scope="module")
def ingested(prefect_harness, gnugo_path: str, tmp_path_factory: pytest.TempPathFactory) -> SimpleNamespace:
    base = tmp_path_factory.mktemp("ingest")
    corpus = mixed_corpus(gnugo_records(gnugo_path), random_games=6)
    source, data, options = corpus.write(base / "corpus"), base / "data", EncodeOptions()
    plan = crash_part_way(source, data, options)
    dataset = layout.dataset_dir(data, NAME)
    first = run_ingest([str(source)], NAME, str(data), options, workers=2, target_rows=TARGET_ROWS)
    after_first = files_of(dataset)
    second = run_ingest([str(source)], NAME, str(data), options, workers=2, target_rows=TARGET_ROWS)
    (extracted,) = {p.parent for p in (data / "raw").rglob("gnugo-0.sgf")}
    return SimpleNamespace(corpus=corpus, data=data, dataset=dataset, plan=plan, first=first, second=second,
                           after_first=after_first, after_second=files_of(dataset),
                           prefix=extracted.relative_to(data / "raw").as_posix() + "/")


def test_every_accepted_move_is_stored_once_in_each_of_the_eight_symmetries(ingested):
    corpus: Corpus = ingested.corpus
    rows = read_rows(datasets.shard_paths(ingested.dataset))
    assert ingested.first.rows == len(rows["planes"]) == corpus.expected_rows(8)
    assert len(set(position_keys(rows))) == len(rows["planes"])
    per_position = Counter(zip(rows["source"].tolist(), rows["move_number"].tolist()))
    assert set(per_position.values()) == {8} and len(per_position) == corpus.expected_rows(1)


def test_rows_decode_to_the_positions_moves_and_results_of_their_games(ingested):
    rows = read_rows(datasets.shard_paths(ingested.dataset))
    assert_rows_match_games(rows, ingested.corpus.records_by_source(ingested.prefix))


def test_quarantine_holds_exactly_the_broken_games(ingested):
    shard_of = {label: spec.index for spec in ingested.plan for label in spec.labels}
    assert shard_of[f"{ingested.prefix}gnugo-0.sgf"] != shard_of[f"{ingested.prefix}zz-duplicate.sgf"]
    table = pq.read_table(ingested.dataset / datasets.QUARANTINE)
    assert {(r["file"], r["game_index"], r["reason"]) for r in table.to_pylist()} == (
        ingested.corpus.expected_quarantine(ingested.prefix))


def test_dataset_reads_back_with_pyarrow_and_polars_in_the_row_schema(ingested):
    shards = datasets.shard_paths(ingested.dataset)
    assert len(shards) > 2
    for shard in shards:
        assert pq.read_schema(shard).equals(schemas.ROW_SCHEMA)
    frame = pl.scan_parquet(shards).collect()
    assert frame.schema == pl.from_arrow(schemas.ROW_SCHEMA.empty_table()).schema
    assert frame.height == ingested.corpus.expected_rows(8)
    nbytes = features.packed_nbytes(features.get_encoder(EncodeOptions().encoder).num_planes, EncodeOptions().size)
    assert frame["planes"].bin.size().unique().to_list() == [nbytes]


def test_the_crashed_builds_leftovers_are_gone_and_only_listed_shards_remain(ingested):
    manifest = datasets.read_manifest(ingested.dataset)
    visible = {p.name for p in ingested.dataset.iterdir() if p.name != datasets.WORK_DIR}
    assert visible == {s["file"] for s in manifest["shards"]} | {datasets.MANIFEST, datasets.QUARANTINE}
    assert not [p for p in ingested.dataset.rglob("*") if p.name.startswith(TEMP_PREFIX)]


def test_second_run_creates_and_rewrites_no_file(ingested):
    assert ingested.after_second == ingested.after_first
    assert ingested.second == ingested.first


def test_summary_counts_the_corpus_games_positions_and_refusals(ingested):
    corpus: Corpus = ingested.corpus
    facts = ingested.first
    expected = corpus.expected_quarantine()
    assert facts.games == len(corpus.accepted)
    assert facts.positions == corpus.expected_rows(1)
    assert facts.games_refused == len(expected)
    assert facts.refusals == dict(Counter(reason.partition("@")[0] for _, _, reason in expected))
    winners = Counter(slot.record.winner for slot in corpus.accepted)
    assert facts.results == {name: winners[w] for w, name in ((1, "black"), (-1, "white"), (0, "jigo/unknown"))
                                if winners[w]}


def test_flow_publishes_the_summary_as_a_markdown_artifact(ingested):
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey

    with get_client(sync_client=True) as client:
        wanted = ArtifactFilter(key=ArtifactFilterKey(any_=[artifact_key("dataset", NAME)]))
        artifacts = client.read_artifacts(artifact_filter=wanted)
    assert artifacts, "no dataset summary artifact"
    assert f"| rows | {ingested.first.rows:,} |" in artifacts[-1].data


def test_progress_counts_every_planned_shard_as_done(ingested):
    assert dataset_progress(str(ingested.data), NAME) == (len(ingested.plan), len(ingested.plan))


# --- without running the flow --------------------------------------------------------------------

@pytest.mark.parametrize("name", ["mixed", "KGS_2019.v2", "gen=3", "cgos-9x9", "x" * 128, "a--b_"])
def test_artifact_keys_are_valid_for_every_name_the_layout_allows(name):
    from prefect.client.schemas.actions import ArtifactCreate

    layout.safe_name(name)
    for prefix in ("ingest", "dataset"):
        key = artifact_key(prefix, name)
        assert ArtifactCreate(key=key, type="markdown", data="").key == key  # Prefect's own check



def test_progress_counts_the_shards_recorded_so_far(tmp_path):
    source = tmp_path / "club"
    for i, record in enumerate(agent_records(4)):
        (source / f"{i}.sgf").parent.mkdir(exist_ok=True)
        (source / f"{i}.sgf").write_text(write(record))
    data, options = tmp_path / "data", EncodeOptions(augment="none")
    dataset = layout.dataset_dir(data, "club")
    plan = plan_shards.fn([str(source)], str(tmp_path), str(dataset), options, target_rows=1)
    assert dataset_progress(str(data), "club") == (0, len(plan)) == (0, 4)
    encode_shard.fn(plan[0], str(dataset), options)
    assert dataset_progress(str(data), "club") == (1, 4)


def test_progress_of_a_dataset_never_planned_is_zero_of_zero(tmp_path):
    assert dataset_progress(str(tmp_path), "nothing") == (0, 0)
