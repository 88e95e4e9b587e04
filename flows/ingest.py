"""Ingest flow: download (or generate) SGF sources, encode them to a Parquet dataset in parallel, summarise.

    downloads = download_source(source) for each source # one by one: the first failure stops the run
    games     = play_gnugo_games.map(chunks)            # a gnugo-NxN:... source: GNU Go plays itself
    shards    = plan_shards(sgf dirs)                   # content-keyed groups of files
    stats     = encode_shard.map(shards)                # processes locally, or a Dask cluster
    manifest  = finalize_dataset(stats)                 # dedupe, quarantine, manifest last

`run_ingest` picks the task runner (a process pool of `workers`, or `dask_address`).
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

from prefect import flow, unmapped
from prefect.artifacts import create_markdown_artifact, create_progress_artifact, update_progress_artifact

from flows.runtime import StoppingProcessPool, artifact_key, prefect_api, results_as_completed, task_runner
from gocore.errors import GozeroError
from gocore.nn.encode import EncodeOptions
from storage import datasets, layout
from tasks.app.sizes import resolve_size
from tasks.download import download_source, expand_sources
from tasks.encode import encode_shard, finalize_dataset, plan_shards
from tasks.gnugo_games import gnugo_game_files, gnugo_source_of, plan_gnugo_games, play_gnugo_games


@flow(name="ingest", log_prints=True, task_runner=StoppingProcessPool())
def ingest(sources: list[str], dataset: str, data_dir: str | None = None,
           options: EncodeOptions = EncodeOptions(), target_rows: int | None = None,
           replace: bool = False) -> datasets.DatasetSummary:
    """Download `sources`, encode every game to ``<data>/datasets/<dataset>/``; returns the summary.

    Args:
        sources: URLs, file:// URLs, local paths, data:inbox (<data>/inbox), catalog names like
            cgos-9x9:last-12-months, or GNU Go self-play like gnugo-9x9:level=1,games=100.
        dataset: The dataset's name: its directory under <data>/datasets/.
        data_dir: The data dir (default: $GOZERO_DATA, else ./gozero-data).
        options: How games are encoded: encoder, augmentation, board size and filters.
        target_rows: Rows per shard (default: the encoder's).
        replace: Rebuild a complete dataset of this name from other sources or options (else refused).
    """
    data = layout.data_dir(data_dir)
    dataset_dir = layout.dataset_dir(data, dataset)
    names = expand_sources(sources)
    resolve_size(options.size, *names)  # a size the sources contradict: refused before any game is played
    is_new = not dataset_dir.exists()
    with datasets.build_lock(dataset_dir):
        if not replace:
            datasets.refuse_other_build(dataset_dir, names, asdict(options))
        try:
            build(names, dataset_dir, data, options, target_rows)
        except GozeroError:  # a missing source, every game refused...: no half-made first build
            if is_new:
                datasets.remove_unfinished(dataset_dir)
            raise
    facts = datasets.summary(dataset_dir)
    create_markdown_artifact(datasets.summary_markdown(dataset, facts),
                             key=artifact_key("dataset", dataset),
                             description=f"summary of dataset {dataset}")
    return facts


def build(names: list[str], dataset_dir: Path, data: Path, options: EncodeOptions, target_rows: int | None) -> None:
    """Fetch the sources, encode their games in parallel tasks, write the manifest last."""
    # Downloads are I/O: one at a time, so an unreachable source ends the run at once.
    roots = [root for name in names for root in fetch_or_generate(name, str(data))]
    plan = plan_shards(roots, str(layout.raw_root(data)), str(dataset_dir), options, target_rows)
    progress = create_progress_artifact(0.0, key=artifact_key("ingest", dataset_dir.name),
                                        description=f"shards of {dataset_dir.name} encoded")
    futures = encode_shard.map(plan, unmapped(str(dataset_dir)), unmapped(options))
    for done, _ in enumerate(results_as_completed(futures), start=1):
        update_progress_artifact(progress, 100.0 * done / max(len(plan), 1))
    finalize_dataset(str(dataset_dir), plan, options, names)


def fetch_or_generate(name: str, data: str) -> list[str]:
    """The SGF directories or files of one source, inside a flow: downloaded, or (a ``gnugo-NxN:...``
    source) its missing games played by GNU Go in parallel tasks on the flow's task runner."""
    source = gnugo_source_of(name)
    if source is None:
        return download_source(name, data)["sgf_dirs"]
    chunks = plan_gnugo_games(source, data)
    played = sum(results_as_completed(play_gnugo_games.map(chunks, unmapped(source), unmapped(data))))
    print(f"{source.text}: {played} games played, {source.games - played} already on disk")
    return gnugo_game_files(source, data)


def run_ingest(sources: list[str], dataset: str, data_dir: str | None = None,
               options: EncodeOptions = EncodeOptions(), workers: int | None = None,
               dask_address: str | None = None, target_rows: int | None = None,
               replace: bool = False) -> datasets.DatasetSummary:
    """Run the flow with a process pool of `workers` (default: cores) or on a Dask cluster. A
    dataset it would replace unasked is refused first, before any server starts."""
    if not replace:
        datasets.refuse_other_build(layout.dataset_dir(layout.data_dir(data_dir), dataset),
                                    expand_sources(sources), asdict(options))
    runner = task_runner(workers, dask_address)
    with prefect_api():
        return ingest.with_options(task_runner=runner)(sources, dataset, data_dir, options, target_rows, replace)


def dataset_progress(data_dir: str | None, dataset: str) -> tuple[int, int]:
    """(shards finished, shards planned) of a dataset being built; for progress bars."""
    return datasets.progress(layout.dataset_dir(layout.data_dir(data_dir), dataset))

