"""tasks: the Prefect tasks of every pipeline, and beneath them the application code they share.

- `tasks.app`   application code without Prefect: settings dataclasses and presets, players, models
                by URI, reviews, rows, resumable steps, read models (flows, the CLI and the
                benchmarks import it too; a contract keeps Prefect and the other tasks modules out)
- the rest      one module of Prefect tasks per stage (`encode`, `train`, `selfplay`, `evaluate`,
                `zero`, `ladder`, `alphago`, `reinforce`, `alphago_eval`, ...); `promotion` moves
                a champion and announces it

Start reading at `tasks.app.players` and `tasks.zero`.
"""
