"""A command handler on its own: routed by :func:`~rhema_lsp.server.router.dispatch`
with a :class:`~rhema_lsp.server.router.Service` of the test's making, over
the adapter's fake server: no ``RhemaServer``, no ``AgentService``, no
connection. What the server's import loop used to forbid."""

from __future__ import annotations

from rhema_lsp.runs.registry import Run
from rhema_lsp.runs.settings import Settings
from rhema_lsp.server import handlers
from rhema_lsp.server.execution import Execution
from rhema_lsp.server.requests import Request
from rhema_lsp.server.router import Service, dispatch
from rhema_lsp.server.state import ServerState
from tests.unit.server.test_pygls_adapter import Host

handlers.load()


class AloneService:
    """Just the state and the execution a handler reads."""

    def __init__(self) -> None:
        self.state = ServerState(Host())
        self.execution = Execution(self.state)

    @property
    def settings(self) -> Settings:
        return self.state.settings


async def test_rhema_cancel_stops_the_session_run_through_the_router() -> None:
    service: Service = AloneService()
    run = Run("s1", 1)
    service.state.runs.add(run)
    answer = await dispatch(service, "rhema.cancel", [{"session": "s1"}], Request())
    assert answer == {"cancelled": ["s1"]}
    assert run.cancelled
    assert await dispatch(service, "rhema.cancel", [{}], Request()) == {"cancelled": ["s1"]}
