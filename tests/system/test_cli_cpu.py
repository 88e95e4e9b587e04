"""What a timed `gozero` command costs reaches whoever timed it: the fork server its pool workers
were forked from is ended and reaped before the command exits, so their CPU is in the command's
own rusage (`/usr/bin/time`, a shell's `time`, a parent's wait4). Before, `gozero evaluate` on 2
workers showed 12 % CPU for 5.5 minutes of games (issue "Every CPU-second counted")."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from gocore.cpu import tree_cpu_seconds

REPO = Path(__file__).resolve().parents[2]
GOZERO = Path(sys.executable).with_name("gozero")


def test_a_command_s_wait_status_carries_the_cpu_of_its_forked_pool_workers(tmp_path: Path):
    command = [str(GOZERO), "evaluate", "uct-300", "uct-300", "--games", "2", "--workers", "1", "--size", "7",
               "--data-dir", str(tmp_path / "data")]
    env = {**os.environ, "GOZERO_POOL_START": "forkserver"}
    process = subprocess.Popen(command, cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    seen = 0.0  # the most CPU the command's whole tree had spent, sampled while it ran
    while True:
        pid, status, usage = os.wait4(process.pid, os.WNOHANG)  # not poll(): wait4 gives the rusage
        if pid:
            break
        seen = max(seen, tree_cpu_seconds(process.pid))
        time.sleep(0.2)
    process.returncode = os.waitstatus_to_exitcode(status)
    assert process.returncode == 0, process.stderr.read().decode()[-2000:]
    reported = usage.ru_utime + usage.ru_stime
    assert seen > 3.0
    assert reported >= 0.9 * seen, (reported, seen)  # was the flow process's share alone
