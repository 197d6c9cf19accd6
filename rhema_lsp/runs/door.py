"""One door kit: what every front door does around the pipeline, written once.

The language server and the ACP agent each hold one :class:`Door` and keep
only what their wire needs (where events go, what their tools add, how an
error is answered). The order of every setup step lives here:

1. **The store.** The folder's store, opened once however many commands
   ask together (:class:`~rhema_lsp.runs.stores.StoreRegistry`).
2. **The settings.** The door's settings with the session's stored choices
   over them (:meth:`Door.settings`, :mod:`~rhema_lsp.runs.choices`).
3. **The run registered** (:meth:`Door.start`), under its session (a new
   session's id is decided first): a session that already runs a turn in
   this process refuses the prompt here
   (:class:`~rhema_lsp.runs.registry.SessionRunningError`), *before*
   anything is stored, so a refused prompt reserves no turn number and the
   session's turns stay 1, 2, 3 with no gap.
4. **The turn decided**: a prompt's number reserved durably, a new session
   created holding its prompt as turn 1, in one transaction; a continuation
   goes on with the last turn. A failure here unregisters the run.
5. :meth:`~rhema_lsp.runs.turn.Turns.run`, then :meth:`Door.end`.

The provider cache (:class:`~rhema_lsp.runs.backends.Backends`) is the
door's too. Deleting a session (:meth:`Door.delete`) stops its run here,
waits until it let go, deletes it, forgets what the pipeline keeps of it
and runs the door's own forgetting (ACP: the session's language servers
stopped). Shutdown (:meth:`Door.shutdown`, once) is one order for every
door: the runs (cancelled, :data:`~rhema_lsp.runs.registry.SHUTDOWN_WAIT`
seconds to checkpoint), the door's own tasks, the MCP servers, the language
servers, the stores.
"""

from __future__ import annotations

import dataclasses
import secrets
from collections.abc import Awaitable, Callable, Hashable, Iterable
from typing import Generic, Protocol, TypeVar

from rhema_lsp.mcp.hub import McpHub
from rhema_lsp.runs.backends import Backends
from rhema_lsp.runs.choices import session_settings
from rhema_lsp.runs.hook_events import prompt_hooks
from rhema_lsp.runs.points import TURN_RESERVED
from rhema_lsp.runs.refs import TurnRef
from rhema_lsp.runs.registry import MsgId, Run, RunRegistry
from rhema_lsp.runs.settings import Settings
from rhema_lsp.runs.slash import expand, read_commands
from rhema_lsp.runs.stores import Notice, StoreRegistry
from rhema_lsp.runs.turn import Turns
from rhema_lsp.runs.workplace import Backend, Plan, Workplace
from rhema_lsp.sessions import SessionStore

__all__ = ["Closable", "Door"]

K = TypeVar("K", bound=Hashable)
B = TypeVar("B", bound=Backend)


class Closable(Protocol):
    """Something a door stops at shutdown (a session's language servers)."""

    async def aclose(self) -> None: ...


class Door(Generic[K, B]):
    """The setup one front door shares with the other (see the module docstring).

    Parameters
    ----------
    mcp
        The MCP servers the runs take tools from.
    backends
        The door's provider cache.
    turns
        The run pipeline (default: one on ``mcp``).
    on_notice
        Told a store's notice as the store opens.
    """

    def __init__(
        self,
        mcp: McpHub,
        backends: Backends[K, B],
        *,
        turns: Turns | None = None,
        on_notice: Notice | None = None,
    ) -> None:
        self.mcp = mcp
        self.backends = backends
        self.turns = Turns(mcp) if turns is None else turns
        self.runs = self.turns.runs = RunRegistry()
        self.stores = StoreRegistry(on_notice)
        self._closed = False

    async def settings(
        self, settings: Settings, store: SessionStore, session: str | None
    ) -> Settings:
        """The settings of a run of ``session`` (``None``: a new one): its
        stored choices over ``settings``.

        Raises
        ------
        SessionStoreError
            The store cannot be read.
        """
        return await session_settings(settings, store, session)

    async def expand(
        self, plan: Plan, place: Workplace, session: str | None = None
    ) -> tuple[Plan, str | None]:
        """``plan`` as the model is to be sent it, and the model a command
        asks for: its prompt expanded when what the user typed (its title)
        is a custom slash command of the folder (:mod:`~rhema_lsp.runs.slash`),
        then the ``SessionStart`` (``session`` is ``None``: a new one) and
        ``UserPromptSubmit`` hooks' context added
        (:mod:`~rhema_lsp.runs.hook_events`). Every door calls it before
        :meth:`start`; the title stays as typed.

        Raises
        ------
        PromptBlocked
            A hook refused the prompt; nothing was stored.
        """
        if plan.prompt is None:
            return plan, None
        model = None
        if plan.title.lstrip().startswith("/"):
            commands = await read_commands(place.folder, self.mcp.config_path)
            self.turns.skills.report(commands.problems)
            expanded = expand(plan.title, commands, plan.mode)
            if expanded is not None:
                rest = plan.prompt[len(plan.title) :] if plan.prompt.startswith(plan.title) else ""
                mode, model = expanded.mode or plan.mode, expanded.model
                plan = dataclasses.replace(plan, prompt=expanded.prompt + rest, mode=mode)
        if not plan.tools:  # rhema.edit's rewrite: no prompt of the user's own
            return plan, model
        assert plan.prompt is not None
        hooks = await self.turns.hooks.load(place.folder, place.editor)
        roots = list(place.roots) or [place.folder]
        context = await prompt_hooks(hooks, plan.prompt, session, place.folder, roots)
        if context:
            plan = dataclasses.replace(plan, prompt=f"{plan.prompt}\n\n{context}")
        return plan, model

    async def start(
        self,
        store: SessionStore,
        session: str | None,
        plan: Plan,
        *,
        model: str = "",
        new_id: str | None = None,
        msg_id: MsgId | None = None,
    ) -> Run:
        """``plan``'s run, registered and its turn decided (steps 3 and 4 of
        the module docstring): on ``session``, or on a session created now
        (with the id ``new_id`` when the door handed one out already).

        Raises
        ------
        SessionRunningError
            The session runs a turn in this process; nothing was stored.
        SessionStoreError
            ``session`` is unknown, or ``new_id`` taken.
        """
        run = Run(session=session or new_id or secrets.token_hex(8), turn=0, msg_id=msg_id)
        self.runs.add(run)
        try:
            ref = await self._begin(store, session, plan, run.session, model)
        except BaseException:
            self.runs.remove(run)
            raise
        run.turn = ref.turn
        return run

    async def _begin(
        self, store: SessionStore, session: str | None, plan: Plan, new_id: str, model: str
    ) -> TurnRef:
        if session is None:
            first = plan.message()
            info = await store.create(plan.title, model=model, session_id=new_id, first=first)
            ref = TurnRef(info.id, 1)
        elif plan.prompt is None:
            ref = TurnRef(session, await store.turn_numbers.current(session))
        else:
            ref = TurnRef(session, await store.turn_numbers.reserve(session))
        if plan.prompt is not None and self.turns.on_point is not None:
            self.turns.on_point(TURN_RESERVED)
        return ref

    def end(self, run: Run) -> None:
        """``run`` ended: unregister it."""
        self.runs.remove(run)

    async def delete(
        self,
        store: SessionStore,
        session: str,
        *,
        forget: Callable[[str], Awaitable[None]] | None = None,
    ) -> bool:
        """Stop ``session``'s run here, wait until it let go, delete it from
        ``store``, forget it (the pipeline's state, then ``forget``); whether
        the store had it.

        Raises
        ------
        SessionStoreError
            It cannot be deleted (``SessionBusyError``: another window runs it).
        """
        self.runs.cancel(session)
        await self.runs.wait_finished(session)
        deleted = await store.delete(session)
        self.turns.forget(session)
        if forget is not None:
            await forget(session)
        return deleted

    @property
    def closed(self) -> bool:
        """Whether :meth:`shutdown` has begun."""
        return self._closed

    async def shutdown(
        self,
        *,
        tasks: Callable[[], Awaitable[None]] | None = None,
        languages: Iterable[Closable] = (),
    ) -> None:
        """Stop everything, in the module docstring's order (once: later
        calls return at once). ``tasks`` ends the door's own tasks;
        ``languages`` are the language servers to stop."""
        if self._closed:
            return
        self._closed = True
        await self.runs.stop_all()
        if tasks is not None:
            await tasks()
        await self.mcp.aclose()
        for service in list(languages):
            await service.aclose()
        await self.stores.close()
