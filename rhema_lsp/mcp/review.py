"""The review step of a form elicitation: what will be sent, shown before it is.

MCP's elicitation spec asks the client to let the user review the answers
before they reach the server. A form asked question by question
(:mod:`rhema_lsp.mcp.asks`) ends with one more question,
:func:`review`: every answer by its field's title (a left-out optional
field named as such, a long value shortened, a field the schema marks as
``format: password`` or named like a secret never echoed) and the choice to
:data:`SEND` it or :data:`DECLINE` (``Deny``; dismissing the question cancels the
form). An editor that shows the whole form itself (a
:class:`~rhema_lsp.mcp.host.FormFiller`) is its own review: the user
sees every value when submitting it.

Nothing here raises: the answer is the elicitation's action.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from rhema_lsp.tools.editor import DENY, Editor

__all__ = ["DECLINE", "SEND", "review", "summary"]

SEND, DECLINE = "Send", DENY
"""The review's choices: the refusal is :data:`DENY`, so an editor that
approves by "the choice that is not Deny" (ACP's permission request,
``ask --yes``) sends."""
_VALUE_CHARS = 80
_HIDDEN = ("password", "secret", "token")


async def review(
    server: str, editor: Editor, message: str, schema: Mapping[str, Any], content: Mapping[str, Any]
) -> Literal["accept", "decline", "cancel"]:
    """Show ``content`` (the answers to ``schema``'s fields) and ask whether
    to send it to ``server``; the elicitation's action."""
    answer = await editor.confirm(
        f"Send to the MCP server {server} ({message}): {summary(schema, content)}",
        [DECLINE, SEND],
    )
    if answer == SEND:
        return "accept"
    return "decline" if answer == DECLINE else "cancel"


def summary(schema: Mapping[str, Any], content: Mapping[str, Any]) -> str:
    """``Title: value; ...`` for every field of ``schema``, in its order."""
    properties = schema.get("properties")
    fields: Mapping[str, Any] = properties if isinstance(properties, Mapping) else {}
    parts = []
    for name, field in fields.items():
        spec: Mapping[str, Any] = field if isinstance(field, Mapping) else {}
        title = str(spec.get("title") or name)
        if name not in content:
            parts.append(f"{title}: (left out)")
            continue
        parts.append(f"{title}: {_shown(name, spec, content[name])}")
    return "; ".join(parts) if parts else "(no fields)"


def _shown(name: str, field: Mapping[str, Any], value: Any) -> str:
    secret = str(field.get("format", "")).lower() == "password" or any(
        word in name.lower() for word in _HIDDEN
    )
    if isinstance(value, bool):
        text = "yes" if value else "no"
    elif isinstance(value, list):
        text = ", ".join(str(item) for item in value)
    else:
        text = str(value)
    if secret:
        return "•" * min(len(text), 8)
    return text if len(text) <= _VALUE_CHARS else text[: _VALUE_CHARS - 1] + "…"
