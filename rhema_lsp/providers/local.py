"""Finding a model server on this machine, and what models a server lists.

Local servers (Ollama, LM Studio, llama.cpp, vLLM) speak the OpenAI-compatible
``GET /models``; :func:`find_local_servers` probes every candidate port at once
with a short timeout and keeps those that answer like one, in the preset order
(:func:`find_local_server` takes the first). No proxy is used: these are
loopback addresses.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

import anyio
import httpx

from rhema_lsp.providers.presets import LocalServer

DETECT_TIMEOUT = 0.15
"""Seconds a local server gets to answer the autodetection probe."""

__all__ = [
    "DETECT_TIMEOUT",
    "ModelListing",
    "find_local_server",
    "find_local_servers",
    "list_models",
    "model_ids",
    "port_list",
]


@dataclass(frozen=True, slots=True)
class ModelListing:
    """What a server lists at ``/models``: the model ids and their owners."""

    models: list[str]
    owners: set[str]


async def list_models(base_url: str, wait: float) -> ModelListing | None:
    """The models a local OpenAI-compatible server lists, or ``None`` if it
    does not answer like one within ``wait`` seconds."""
    try:
        async with httpx.AsyncClient(timeout=wait, trust_env=False) as client:
            response = await client.get(f"{base_url}/models")
    except httpx.HTTPError:
        return None
    if response.status_code != 200:
        return None
    try:
        payload = json.loads(response.content)
    except ValueError:
        return None
    data = payload.get("data") if isinstance(payload, dict) else None
    if not isinstance(data, list):
        return None
    items = [item for item in data if isinstance(item, dict) and item.get("id")]
    return ModelListing(
        [str(item["id"]) for item in items], {str(item.get("owned_by", "")) for item in items}
    )


async def model_ids(base_url: str, wait: float) -> list[str]:
    """The model ids ``base_url`` lists; none when it does not answer."""
    listing = await list_models(base_url, wait)
    return [] if listing is None else listing.models


async def find_local_servers(
    servers: Sequence[LocalServer], wait: float
) -> list[tuple[LocalServer, ModelListing]]:
    """Every one of ``servers`` that answers within ``wait`` seconds (all probed
    at once), in their order, with what it lists (possibly no model)."""
    found: dict[int, ModelListing] = {}

    async def probe(position: int, server: LocalServer) -> None:
        listing = await list_models(server.base_url, wait)
        if listing is not None:
            found[position] = listing

    async with anyio.create_task_group() as group:
        for position, server in enumerate(servers):
            group.start_soon(probe, position, server)
    return [(servers[position], found[position]) for position in sorted(found)]


async def find_local_server(
    servers: Sequence[LocalServer], wait: float
) -> tuple[LocalServer, ModelListing] | None:
    """The first of ``servers`` (in their order) that answers within ``wait``
    seconds, all probed at once, and what it lists."""
    answered = await find_local_servers(servers, wait)
    return answered[0] if answered else None


def port_list(servers: Sequence[LocalServer]) -> str:
    """The servers' ports for a message: ``11434, 1234 or 8080``."""
    ports = [server.port for server in servers]
    return ", ".join(ports[:-1]) + f" or {ports[-1]}" if len(ports) > 1 else "".join(ports)
