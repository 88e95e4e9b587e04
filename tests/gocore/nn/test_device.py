"""Devices: choice, autocast and batch moves, on CPU, with CUDA faked where a path needs it."""

from __future__ import annotations

import contextlib
from collections import namedtuple

import pytest
import torch

from gocore.nn.device import DeviceError, autocast_context, choose_device, pin_if_cuda, to_device


@pytest.fixture
def no_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    """Neither CUDA nor MPS, as on this CPU machine, wherever the tests run."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: False)


@pytest.fixture
def fake_cuda(monkeypatch: pytest.MonkeyPatch) -> None:
    """CUDA reported present (two bf16 GPUs); nothing here may really launch a CUDA kernel."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda including_emulation=True: True)


def test_auto_picks_cpu_without_a_gpu(no_gpu: None) -> None:
    assert choose_device() == torch.device("cpu")
    assert choose_device("auto") == torch.device("cpu")


def test_cpu_is_always_available() -> None:
    assert choose_device(" CPU ") == torch.device("cpu")


@pytest.mark.parametrize("name", ["cuda", "cuda:0"])
def test_requesting_missing_cuda_is_a_clear_error(name: str, no_gpu: None) -> None:
    with pytest.raises(DeviceError, match=rf"'{name}' was requested but CUDA is not available.*auto or cpu"):
        choose_device(name)


def test_requesting_missing_mps_is_a_clear_error(no_gpu: None) -> None:
    with pytest.raises(DeviceError, match="'mps' was requested but Apple MPS is not available"):
        choose_device("mps")


def test_unknown_device_name_is_refused() -> None:
    with pytest.raises(DeviceError, match="unknown device 'tpu'"):
        choose_device("tpu")


def test_auto_prefers_cuda_when_present(fake_cuda: None) -> None:
    assert choose_device("auto") == torch.device("cuda")


def test_auto_takes_mps_when_there_is_no_cuda(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: True)
    assert choose_device("auto") == torch.device("mps")


def test_cuda_index_must_exist(fake_cuda: None) -> None:
    assert choose_device("cuda:1") == torch.device("cuda", 1)
    with pytest.raises(DeviceError, match="only 2 CUDA device"):
        choose_device("cuda:2")


def test_malformed_cuda_name_is_refused(fake_cuda: None) -> None:
    with pytest.raises(DeviceError, match="not a CUDA device name"):
        choose_device("cuda:x")


def test_autocast_on_cpu_is_a_no_op() -> None:
    context = autocast_context(torch.device("cpu"))
    assert isinstance(context, contextlib.nullcontext)
    with context:
        product = torch.ones(2, 2) @ torch.ones(2, 2)
    assert product.dtype == torch.float32


def test_autocast_on_cuda_is_bf16(fake_cuda: None) -> None:
    context = autocast_context(torch.device("cuda"))
    assert isinstance(context, torch.autocast)
    assert context.device == "cuda" and context.fast_dtype == torch.bfloat16


def test_autocast_disabled_or_without_native_bf16_is_a_no_op(fake_cuda: None, monkeypatch: pytest.MonkeyPatch) -> None:
    assert isinstance(autocast_context(torch.device("cuda"), enabled=False), contextlib.nullcontext)
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda including_emulation=True: including_emulation)
    assert isinstance(autocast_context(torch.device("cuda")), contextlib.nullcontext)


def test_autocast_on_mps_is_a_no_op() -> None:
    assert isinstance(autocast_context(torch.device("mps")), contextlib.nullcontext)


def test_pin_leaves_tensors_alone_off_cuda() -> None:
    tensor = torch.ones(3)
    assert pin_if_cuda(tensor, torch.device("cpu")) is tensor
    assert pin_if_cuda(tensor, torch.device("mps")) is tensor


def test_pin_pins_host_tensors_bound_for_cuda(monkeypatch: pytest.MonkeyPatch) -> None:
    pinned = torch.zeros(3)
    monkeypatch.setattr(torch.Tensor, "pin_memory", lambda self: pinned)
    assert pin_if_cuda(torch.ones(3), torch.device("cuda")) is pinned


def test_to_device_moves_nested_batches_and_keeps_their_shape() -> None:
    Batch = namedtuple("Batch", "planes policy")
    batch = {"train": Batch(torch.ones(2, 17, 9, 9), [torch.zeros(2, 82)]), "step": 3, "name": "x"}
    moved = to_device(batch, torch.device("cpu"))
    assert isinstance(moved["train"], Batch) and isinstance(moved["train"].policy, list)
    assert moved["step"] == 3 and moved["name"] == "x"
    assert moved["train"].planes.device.type == "cpu"
    torch.testing.assert_close(moved["train"].planes, batch["train"].planes)


def test_to_device_copies_asynchronously_only_to_cuda(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[torch.device, bool]] = []

    def fake_to(self: torch.Tensor, device: torch.device, non_blocking: bool = False) -> torch.Tensor:
        calls.append((device, non_blocking))
        return self

    monkeypatch.setattr(torch.Tensor, "to", fake_to)
    to_device([torch.ones(1)], torch.device("cuda"))
    to_device([torch.ones(1)], torch.device("cuda"), non_blocking=False)
    to_device([torch.ones(1)], torch.device("mps"))
    assert [blocking for _, blocking in calls] == [True, False, False]


def test_default_threads_leave_busy_cores_alone():
    from gocore.nn.device import default_threads

    assert default_threads(cores=2, busy=0.0) == 2
    assert default_threads(cores=2, busy=1.2) == 1
    assert default_threads(cores=8, busy=2.6) == 5
    assert default_threads(cores=2, busy=7.0) == 1  # never below one


def test_busy_cores_measures_a_spinning_process():
    import multiprocessing
    import os

    from gocore.nn.device import busy_cores

    now = busy_cores(0.2)
    assert 0.0 <= now <= (os.cpu_count() or 1) + 1e-6
    spinner = multiprocessing.get_context("spawn").Process(target=_spin, args=(3.0,))
    spinner.start()
    try:
        import time
        time.sleep(0.5)  # the spawned interpreter is up and spinning
        assert busy_cores(0.5) >= 0.6
    finally:
        spinner.terminate()
        spinner.join()


def _spin(seconds: float) -> None:
    import time

    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass


def test_set_threads_follows_the_environment_and_refuses_nonsense(monkeypatch):
    from gocore.nn.device import set_threads

    before = torch.get_num_threads()
    try:
        monkeypatch.setenv("GOZERO_THREADS", "1")
        assert set_threads() == 1 and torch.get_num_threads() == 1
        assert set_threads(2) == 2 and torch.get_num_threads() == 2
        monkeypatch.setenv("GOZERO_THREADS", "many")
        with pytest.raises(DeviceError, match="GOZERO_THREADS"):
            set_threads()
        with pytest.raises(DeviceError, match="at least 1"):
            set_threads(0)
    finally:
        torch.set_num_threads(before)
