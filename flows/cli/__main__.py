"""`python -m flows.cli` runs the `gozero` command."""

from flows.cli.root import main

main()
