"""The `gozero` command line, the top room of the house: one module per command group.

`root.py` is the typer app and mounts every command; each other module is one command or sub-app
(`loop.py`: `gozero loop` and `gozero run`, `models.py`: `gozero models ...`, and so on); `common.py`
holds what they share (the console, one-line errors, Ctrl-C handling). The CLI may import every
layer; nothing else imports it (an import-linter contract in pyproject.toml). Heavy imports (Prefect,
torch, MLflow) happen inside the commands that need them, so `gozero --help` starts fast.
"""

from flows.cli.root import app, main

__all__ = ["app", "main"]
