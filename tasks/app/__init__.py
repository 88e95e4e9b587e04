"""Application code without Prefect: what the tasks, the flows, the CLI and the benchmarks share.

What belongs here is plain Python over gocore and storage that any layer above may call with no
orchestration around it: the settings dataclasses and their named presets (`loop_settings`,
`loop_presets`, `alphago_settings`, `strong`, `ladder_settings`, `supervised_settings`), typed
``name=value`` changes of them (`overrides`), read models over recorded steps (`loop_view`,
`strong`'s `recipe_spend`), resumable steps (`steps`), players by spec (`players`), a match between
two of them, played here or by the evaluate flow's workers (`evaluate`), models by URI and
`ModelRef` (`models`), game reviews (`review`) and the Go side of stored rows (`rows`).

What does not: anything that imports Prefect (a `@task`, an event, an artifact: those live in the
`tasks` modules beside this package, e.g. promotion in `tasks.promotion`), anything from `flows`,
and any other `tasks` module; pyproject.toml's import contract checks it. Start reading at
`players` and `loop_settings`.
"""
