"""Apply gozero's deployments to a Prefect server: what `gozero serve` and docs/deployments.md's manual steps do.

`apply_deployments(api_url)` makes the server ready to run every deployment in prefect.yaml:
- the `gpu` task-tag concurrency limit (1), so two flows never train on one GPU at once (training
  tasks carry the `gpu` tag);
- the `gozero-local` process work pool;
- `prefect --no-prompt deploy --all` from the project directory (each deployment records this
  checkout as its working directory).
Each step is idempotent: applying twice leaves one limit, one pool and one deployment of each name.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

from gocore.errors import GozeroError
from tasks.train import GPU_TAG

PROJECT = Path(__file__).resolve().parents[1]
WORK_POOL = "gozero-local"
GPU_SLOTS = 1


class DeployError(GozeroError):
    """A step of applying the deployments failed; the message names it and quotes Prefect's output."""


def prefect(api_url: str, *arguments: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run the `prefect` CLI of this interpreter's environment against `api_url` in the project dir."""
    env = {**os.environ, "PREFECT_API_URL": api_url}
    command = [str(Path(sys.executable).with_name("prefect")), *arguments]
    done = subprocess.run(command, cwd=PROJECT, env=env, capture_output=True, text=True, check=False)
    if check and done.returncode != 0:
        tail = (done.stdout + done.stderr).strip().splitlines()[-3:]
        raise DeployError(f"`prefect {' '.join(arguments)}` failed: {' / '.join(tail)}")
    return done


def apply_deployments(api_url: str) -> None:
    """Create the gpu concurrency limit and the work pool if missing, then deploy every deployment."""
    asyncio.run(_limit_and_pool(api_url))  # through the client: two `prefect` processes fewer
    prefect(api_url, "--no-prompt", "deploy", "--all")


async def _limit_and_pool(api_url: str) -> None:
    """The gpu tag's concurrency limit (an upsert by tag) and the process work pool with the process
    worker's default job template (what `prefect work-pool create --type process` makes)."""
    from prefect.client.orchestration import PrefectClient
    from prefect.client.schemas.actions import WorkPoolCreate
    from prefect.exceptions import ObjectNotFound
    from prefect.workers.process import ProcessWorker

    try:
        async with PrefectClient(api_url) as client:
            await client.create_concurrency_limit(tag=GPU_TAG, concurrency_limit=GPU_SLOTS)
            try:
                await client.read_work_pool(WORK_POOL)
            except ObjectNotFound:
                template = ProcessWorker.get_default_base_job_template()
                await client.create_work_pool(WorkPoolCreate(name=WORK_POOL, type="process",
                                                             base_job_template=template))
    except Exception as error:  # noqa: BLE001 - httpx and Prefect errors alike: one line for the user
        raise DeployError(f"setting up the gpu limit and work pool {WORK_POOL} at {api_url} failed: {error}") from None
