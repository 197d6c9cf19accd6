"""The negotiation's rules (:class:`rhema_lsp.server.clients.ClientFeatures`):
a turn detaches unless the client renders events or ``detach`` says
otherwise; a detached run never reports on its request's token."""

from __future__ import annotations

import pytest
from lsprotocol import types

from rhema_lsp.server.clients import ClientFeatures

PROGRESS = types.ClientCapabilities(
    window=types.WindowClientCapabilities(
        work_done_progress=True, show_document=types.ShowDocumentClientCapabilities(support=True)
    )
)


@pytest.mark.parametrize(
    ("options", "detach", "detached"),
    [
        (None, None, True),  # progress advertised, no events: detached
        ({"clientCapabilities": {"events": True}}, None, False),
        (None, False, False),
        ({"clientCapabilities": {"events": True}}, True, True),
        ({"clientCapabilities": "events"}, None, True),  # malformed: nothing declared
    ],
)
def test_a_turn_detaches_unless_the_client_renders_events_or_detach_says(
    options: object, detach: bool | None, detached: bool
) -> None:
    features = ClientFeatures.negotiate(PROGRESS, options)

    assert features.work_done_progress and features.show_document
    assert features.detaches(detach) is detached


def test_a_detached_run_reports_on_no_request_token() -> None:
    features = ClientFeatures.negotiate(PROGRESS, None)

    assert features.progress_token("t-1", detached=True) is None
    assert features.progress_token("t-1", detached=False) == "t-1"
    assert features.progress_token(None, detached=False) is None


def test_a_plain_clients_question_starts_with_an_unnamed_action() -> None:
    """eglot fills its prompt with the first action's title: a plain client's
    first is unnamed, so the prompt starts empty and a typed "Run" is "Run"."""
    plain = ClientFeatures.negotiate(PROGRESS, None)
    ours = ClientFeatures.negotiate(PROGRESS, {"clientCapabilities": {"events": True}})

    assert plain.question_actions(["Deny", "Run"]) == ["", "Deny", "Run"]
    assert ours.question_actions(["Deny", "Run"]) == ["Deny", "Run"]
