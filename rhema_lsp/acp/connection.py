"""One ACP connection: the SDK's connection to the agent, on our line transport.

The SDK's connection runs on :class:`~rhema_lsp.acp.transport.LineTransport`
rather than its own stdio streams, so every line is checked first and stdin
and stdout may be files as well as pipes. An ``initialize`` the door already
answered (:mod:`~rhema_lsp.acp.handshake`, before this module loaded) reaches
the agent through the SDK's own params model, as the SDK's router would hand
it over, and the agent's answer is checked against the one sent. A
``session/new`` answered there too becomes the agent's session under the id
given (:func:`_taken_over`) before any other request is served; its slash
commands follow, and its options with the ``model`` one, the provider
resolved and its models listed, as a ``config_option_update`` sent by a
task the connection owns (cancelled when it ends). When the
connection ends (the client hangs up, or the task is cancelled on
``SIGTERM``) every running prompt is cancelled and checkpointed while the
connection is still up, so a client still listening gets its ``cancelled``
answers; then the agent shuts down, and only then the connection closes.
The SDK's router is ours (:func:`router`): its own plus ``session/delete``.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import cast

import anyio
from acp import Agent, RequestError
from acp.agent.connection import AgentSideConnection
from acp.agent.router import build_agent_router
from acp.meta import AGENT_METHODS
from acp.router import MessageRouter
from acp.schema import (
    ConfigOptionUpdate,
    DeleteSessionRequest,
    InitializeRequest,
    NewSessionRequest,
)
from acp.utils import normalize_result
from anyio.abc import TaskGroup

from rhema_lsp.acp.agent import RhemaAcpAgent
from rhema_lsp.acp.custom_commands import offered
from rhema_lsp.acp.handshake import Greeting
from rhema_lsp.acp.ready import Opened
from rhema_lsp.acp.sessions import AcpSession
from rhema_lsp.acp.transport import LineTransport

__all__ = ["connect", "router"]

logger = logging.getLogger(__name__)


async def _greeted(agent: RhemaAcpAgent, greeting: Greeting) -> None:
    """Hand the agent the ``initialize`` answered before it loaded."""
    request = InitializeRequest.model_validate(greeting.params)
    answer = await agent.initialize(
        protocol_version=request.protocol_version,
        client_capabilities=request.client_capabilities,
        client_info=request.client_info,
    )
    result = answer.model_dump(mode="json", by_alias=True, exclude_none=True, exclude_unset=True)
    if result != greeting.result:  # a bug of the handshake, never the client's
        logger.error(
            "the early initialize answer %s is not the agent's %s", greeting.result, result
        )


async def _taken_over(agent: RhemaAcpAgent, opened: Opened, follow_ups: TaskGroup) -> None:
    """Make the session answered before the agent loaded the agent's: opened
    under its id, told its commands; its options follow (see the module
    docstring)."""
    request = NewSessionRequest.model_validate(opened.params)
    try:
        session = await agent._open(
            opened.session_id,
            request.cwd,
            request.additional_directories,
            request.mcp_servers,
            stored=False,
        )
    except RequestError as exc:  # the folder's store cannot be opened
        logger.error("session %s cannot be opened: %s", opened.session_id, exc)
        return
    await agent.client.session_update(session.id, await offered(agent, session))
    follow_ups.start_soon(_options_told, agent, session)


async def _options_told(agent: RhemaAcpAgent, session: AcpSession) -> None:
    """Send ``session``'s whole option list, the ``model`` one included."""
    try:
        await agent.models.offered(session.model)  # resolved and listed: the slow part
        options = await agent.options.listed(session)  # as the session is now
        update = ConfigOptionUpdate(session_update="config_option_update", config_options=options)
        await agent.client.session_update(session.id, update)
    except Exception:
        logger.exception("the options of session %s were not sent", session.id)


def router(agent: RhemaAcpAgent) -> MessageRouter:
    """The SDK's router for ``agent``, unstable methods on (``session/resume``
    and ``session/close`` are "unstable" there), plus ``session/delete``,
    stable in the schema, which agent-client-protocol 0.12's router has no
    route for (to be reported upstream; this goes when it has one)."""
    routes = build_agent_router(cast("Agent", agent), use_unstable_protocol=True)
    routes.route_request(
        AGENT_METHODS["session_delete"],
        DeleteSessionRequest,
        agent,
        "delete_session",
        adapt_result=normalize_result,
    )
    return routes


async def connect(
    agent: RhemaAcpAgent,
    read: Callable[[], Awaitable[bytes]],
    write: Callable[[bytes], Awaitable[None]],
    greeting: Greeting | None = None,
    opened: Opened | None = None,
) -> None:
    """Serve ``agent`` on one connection (bytes from ``read``, to ``write``)
    until the client hangs up or the task is cancelled, then shut the agent
    down (its prompts answered ``cancelled`` on the still open connection)
    and close the connection.

    Parameters
    ----------
    greeting
        The ``initialize`` already answered on this connection, if any.
    opened
        The ``session/new`` already answered on this connection, if any.
    """
    transport = LineTransport(
        read, write, cancel_prompt=lambda session: bool(agent.runs.cancel(session))
    )
    # The SDK's Agent protocol lists every optional method; its router
    # serves only the ones an agent has, answering the rest "method not found".
    agent.withdraw_requests = transport.withdraw
    agent.after_answer = transport.after_answer
    connection = AgentSideConnection(
        cast("Agent", agent), transport, listening=False, use_unstable_protocol=True
    )
    # The SDK builds its own router and takes no other: ours (router()) goes
    # in its place, the SDK's one private field this package touches
    # (tests/acp/test_session_lifecycle.py serves session/delete through it).
    inner = connection._conn
    assert isinstance(inner._handler, MessageRouter), "the SDK's connection changed"
    inner._handler = router(agent)
    try:
        if greeting is not None:
            await _greeted(agent, greeting)
        async with anyio.create_task_group() as follow_ups:
            if opened is not None:
                await _taken_over(agent, opened, follow_ups)
            await connection.listen()
            follow_ups.cancel_scope.cancel()
    finally:
        with anyio.CancelScope(shield=True):
            try:
                await agent.shutdown()
            finally:
                await connection.close()
