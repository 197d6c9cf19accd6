"""A session's stored choices (mode, model, thinking) over a door's settings.

Both doors keep a session's choices in its store
(:class:`~rhema_lsp.sessions.SessionChoices`: the ACP agent writes them when
the user switches an option) and run a reopened session with them: this is
the one place that says how. :func:`with_choices` returns the settings with
each stored choice that still validates in place of the setting (a value
that does not, a mode renamed since, say, is left out with a line in the
log, and the setting stands).
"""

from __future__ import annotations

import logging

from pydantic import ValidationError

from rhema_lsp.runs.settings import Settings
from rhema_lsp.sessions import SessionStore, StoredChoices, UnknownSessionError

__all__ = ["session_settings", "with_choices"]

logger = logging.getLogger(__name__)


def with_choices(settings: Settings, choices: StoredChoices) -> Settings:
    """``settings`` with the stored ``choices`` that validate in their place."""
    chosen = {
        name: value
        for name, value in (
            ("mode", choices.mode),
            ("model", choices.model),
            ("thinking", choices.thinking),
        )
        if value
    }
    applied = settings
    for name, value in chosen.items():
        try:
            checked = Settings.model_validate({name: value})
        except ValidationError:
            logger.info("a stored %s (%r) is no longer valid: the setting stands", name, value)
            continue
        applied = applied.model_copy(update={name: getattr(checked, name)})
    return applied


async def session_settings(
    settings: Settings, store: SessionStore, session: str | None
) -> Settings:
    """The settings a run of ``session`` (``None``: a new one) uses: its
    stored choices over ``settings``.

    Raises
    ------
    SessionStoreError
        The store cannot be read.
    """
    if session is None:
        return settings
    try:
        return with_choices(settings, await store.choices.load(session))
    except UnknownSessionError:
        return settings
