"""The LSP door's workspace folders under the root policy
(:mod:`rhema_lsp.tools.roots`): a folder above the home directory, ``/etc``
or ``/tmp`` itself is not served, whether the client opens with it or adds
it later (``workspace/didChangeWorkspaceFolders``); the user is told why,
and nothing under it is read or reaches the model."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes.model_server import FakeModelServer, tool_reply
from tests.unit.server.loopback import Loopback, kept_logging, settings, start, stop

SECRET = "SENTINEL-AWS-7c21"


@pytest.fixture
def alice(project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``HOME`` is ``<tmp>/home/alice``, whose ``.aws/credentials`` holds the secret."""
    home = tmp_path / "home" / "alice"
    (home / ".aws").mkdir(parents=True)
    (home / ".aws" / "credentials").write_text(SECRET)
    monkeypatch.setenv("HOME", str(home))
    return home


def warnings(client: Loopback) -> str:
    return "\n".join(p["message"] for p in client.of("window/showMessage"))


@pytest.mark.parametrize("served", ["above-home", "/etc", "/tmp"])
async def test_a_folder_that_confines_nothing_is_not_served(
    alice: Path, openai_fake: FakeModelServer, served: str
) -> None:
    folder = alice.parent if served == "above-home" else Path(served)
    secret = Path("/etc/passwd") if served == "/etc" else alice / ".aws" / "credentials"
    openai_fake.script(tool_reply(("read_file", {"path": str(secret.relative_to(folder))})))
    with kept_logging():
        client = await start(folder, settings(openai_fake))
        try:
            with pytest.raises(RuntimeError, match="no workspace folder Rhema can work in"):
                await client.command("rhema.turn", {"prompt": "read the keys"})
            why = "holds your home directory" if served == "above-home" else "system"
            assert why in warnings(client)
            assert (await client.command("rhema.status", {}))["folders"] == []
        finally:
            await stop(client)
    assert openai_fake.requests == []
    assert not (alice.parent / ".rhema").exists()


async def test_a_folder_added_later_that_confines_nothing_is_not_served(
    alice: Path, project: Path, openai_fake: FakeModelServer
) -> None:
    with kept_logging():
        client = await start(project, settings(openai_fake))
        try:
            above = alice.parent
            client.notify(
                "workspace/didChangeWorkspaceFolders",
                {"event": {"added": [{"uri": above.as_uri(), "name": "home"}], "removed": []}},
            )
            status = await client.command("rhema.status", {})
            assert status["folders"] == [str(project)]
            assert "holds your home directory" in warnings(client)
            with pytest.raises(RuntimeError, match="not one of the workspace folders"):
                await client.command("rhema.turn", {"prompt": "hi", "folder": str(above)})
            credentials = (alice / ".aws" / "credentials").as_uri()
            with pytest.raises(RuntimeError, match="outside the workspace") as refused:
                await client.command(
                    "rhema.turn", {"prompt": "hi", "context": [{"uri": credentials}]}
                )
            assert SECRET not in str(refused.value)
        finally:
            await stop(client)
    assert openai_fake.requests == []
