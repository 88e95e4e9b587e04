"""Imported by multiprocessing's fork server first (`flows.runtime.FORK_SERVER_PRELOAD`), and nowhere
else: the server then dies with the process that started it (`gocore.children.die_with_parent`).

Without this a SIGKILLed flow process left its fork server and pool workers running for ever: every
worker holds the write end of the pipe whose end tells the server that its starter is gone, and a
worker waits for its parent, the server, to die (2026-11-28, tests/system/test_interrupts.py)."""

from gocore.children import die_with_parent

die_with_parent()
