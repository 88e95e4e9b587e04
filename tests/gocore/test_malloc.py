"""gocore.malloc: freed buffers stay in the process (fewer page faults), for its workers too; a
user's own setting wins and GOZERO_MALLOC=system turns it off."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from gocore import malloc

REPO = Path(__file__).resolve().parents[2]
FAULTS = """
import ctypes, ctypes.util, resource, sys
from gocore.malloc import keep_freed_memory
applied = keep_freed_memory() if sys.argv[1] == "on" else False
libc = ctypes.CDLL(ctypes.util.find_library("c"))
libc.malloc.restype, libc.malloc.argtypes, libc.free.argtypes = ctypes.c_void_p, [ctypes.c_size_t], [ctypes.c_void_p]
libc.prctl(41, 1, 0, 0, 0)  # PR_SET_THP_DISABLE: page faults count pages, whatever the machine's huge-page mode
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for size in (1 << 19, 1 << 21, 1 << 23, 1 << 25) * 50:  # 0.5-32 MB blocks, written and freed
    block = libc.malloc(size)
    ctypes.memset(block, 1, size)
    libc.free(block)
print(applied, resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


def faults(mode: str, **env: str) -> tuple[str, int]:
    clean = {k: v for k, v in os.environ.items() if k not in malloc.TUNABLES and k != malloc.SWITCH_ENV}
    out = subprocess.run([sys.executable, "-c", FAULTS, mode], env={**clean, "PYTHONPATH": str(REPO), **env},
                         capture_output=True, text=True, check=True).stdout.split()
    return out[0], int(out[1])


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc")
def test_freed_buffers_are_reused_without_faulting_their_pages_in_again():
    applied, tuned = faults("on")
    _, default = faults("off")
    assert applied == "True" and tuned * 10 < default, (tuned, default)
    assert faults("on", GOZERO_MALLOC="system") == ("False", pytest.approx(default, rel=0.5))


def test_the_tunables_reach_child_processes_and_a_users_own_setting_wins(monkeypatch: pytest.MonkeyPatch):
    for name in malloc.TUNABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv(malloc.SWITCH_ENV, raising=False)
    monkeypatch.setenv("MALLOC_TOP_PAD_", "4096")
    if not malloc.keep_freed_memory():
        pytest.skip("not glibc")
    child = subprocess.run([sys.executable, "-c", "import os; print(os.environ['MALLOC_MMAP_THRESHOLD_'], "
                            "os.environ['MALLOC_TOP_PAD_'])"], capture_output=True, text=True, check=True)
    assert child.stdout.split() == [str(256 << 20), "4096"]
