"""A real peer: llama-cpp-python's OpenAI-compatible server serving SmolLM2 on
loopback, and the OpenAI-compatible adapter streaming a real answer from it;
and the same server started as the README says, with no flag but the model,
found by autodetection on its default port."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import httpx
import pytest

from rhema_lsp.engine import ChatParams, Message, ModelRequest, StopReason, TextDelta, UsageUpdate
from rhema_lsp.providers import ProviderSettings, locate_embedded_model, resolve_provider
from tests.unit.providers.helpers import Recorder


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@pytest.fixture(scope="module")
def llama_server() -> Iterator[str]:
    model = locate_embedded_model()
    assert model is not None
    port = free_port()
    # A file, not a pipe: the server logs freely and a full pipe would stall it.
    with tempfile.TemporaryFile() as log:
        command = [sys.executable, "-m", "llama_cpp.server", "--model", str(model)]
        command += ["--host", "127.0.0.1", "--port", str(port), "--n_ctx", "2048"]
        command += ["--model_alias", "smollm2"]
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=log)
        base_url = f"http://127.0.0.1:{port}/v1"
        try:
            _wait_until_ready(process, base_url, log)
            yield base_url
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def _wait_until_ready(process: subprocess.Popen[bytes], base_url: str, log: IO[bytes]) -> None:
    deadline = time.monotonic() + 120
    while True:
        if process.poll() is not None:
            log.seek(0)
            stderr = log.read().decode(errors="replace")
            raise AssertionError(f"llama_cpp.server exited: {stderr[-2000:]}")
        try:
            if httpx.get(f"{base_url}/models", timeout=1.0, trust_env=False).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        if time.monotonic() > deadline:
            raise AssertionError("llama_cpp.server did not become ready within 120 s")
        time.sleep(0.2)


async def test_streams_a_real_answer(llama_server: str) -> None:
    resolved = await resolve_provider(
        ProviderSettings(provider="llamacpp", base_url=llama_server), {}, detect_local=False
    )
    assert resolved.model == "smollm2"
    sink = Recorder()
    output = await resolved.provider.complete(
        ModelRequest(
            system="You are a helpful assistant.",
            messages=[Message.user("What is the capital of France?")],
            params=ChatParams(max_tokens=32, temperature=0.0),
        ),
        sink,
    )
    deltas = sink.of(TextDelta)
    assert len(deltas) > 1
    assert output.message.text == "".join(d.text for d in deltas)
    assert output.message.text.strip()
    assert output.stop_reason in (StopReason.END_TURN, StopReason.MAX_TOKENS)
    if sink.of(UsageUpdate):
        assert output.usage.output > 0


async def test_autodetected_as_a_local_server(llama_server: str) -> None:
    from rhema_lsp.providers import LocalServer

    resolved = await resolve_provider(
        ProviderSettings(), {}, local_servers=[LocalServer("llamacpp", llama_server)]
    )
    assert resolved.source.startswith("preset llamacpp, autodetected")


DEFAULT_PORT = 8000
"""``python -m llama_cpp.server``'s default port (its default host is localhost)."""


def _port_is_free(port: int) -> bool:
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


@pytest.fixture(scope="module")
def llama_server_as_the_readme_says() -> Iterator[str]:
    model = locate_embedded_model()
    assert model is not None
    assert _port_is_free(DEFAULT_PORT), f"port {DEFAULT_PORT} is taken: stop what listens there"
    with tempfile.TemporaryFile() as log:
        command = [sys.executable, "-m", "llama_cpp.server", "--model", str(model)]
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=log)
        base_url = f"http://127.0.0.1:{DEFAULT_PORT}/v1"
        try:
            _wait_until_ready(process, base_url, log)
            yield str(model)
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def test_llama_cpp_server_with_no_flag_is_autodetected(
    llama_server_as_the_readme_says: str, tmp_path: Path
) -> None:
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.endswith("_API_KEY") and key != "RHEMA_KEY_ORIGINS"
    }
    env["XDG_STATE_HOME"] = str(tmp_path / "state")
    done = subprocess.run(
        [sys.executable, "-m", "rhema_lsp", "status", "--folder", str(tmp_path)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert (
        f"provider: llamacpp · model {llama_server_as_the_readme_says} · "
        f"http://127.0.0.1:{DEFAULT_PORT}/v1"
    ) in lines, done.stdout
    source = next(line for line in lines if line.startswith("source:"))
    assert "autodetected: llama-cpp-python's llama_cpp.server or vLLM answered" in source
