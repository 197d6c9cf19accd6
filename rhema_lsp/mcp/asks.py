"""What a server may ask of us, answered: roots, sampling, elicitation.

These are the SDK's client callbacks, built per connection by
:func:`callbacks`; each reads the connection's current
:class:`~rhema_lsp.mcp.host.RunHost` when the request arrives.

- **roots**: the run's workspace folders, as ``file://`` URIs.
- **sampling** (``sampling/createMessage``): every request is shown to the
  user first (``confirm``: the server, the model, the last message, the
  token limit); only then does it go to the session's own provider, as a
  plain request with no tools, capped at :data:`SAMPLING_MAX_TOKENS`. A
  refusal answers the spec's "user rejected" error (code -1).
- **elicitation** (``elicitation/create``): a form goes to the editor's
  :class:`~rhema_lsp.mcp.host.FormFiller`, or else is asked one question per
  field once the user chose ``Answer`` (``Deny`` declines): a field with
  choices (a boolean, an enum) through ``confirm`` (an optional one with
  :data:`SKIP` too, which leaves it out of the answer), a free-text field (a
  string, a number, a multiple choice as its labels separated by commas)
  through the editor's :class:`~rhema_lsp.mcp.host.TextAsker`, its default
  filled in, a number or a choice asked again until it is one. Dismissing
  any question cancels the form; the answers are shown for review before
  they are sent (:mod:`rhema_lsp.mcp.review`). An editor that cannot ask for text offers a
  field's default as its one choice, and a form with a required free-text field is declined (the log
  says so). A URL is offered by :func:`~rhema_lsp.mcp.pages.offer_page`.

Nothing here raises into the SDK: a failure is an answer (``ErrorData``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import mcp_types
from mcp.client.session import ClientRequestContext

from rhema_lsp.engine.events import Event
from rhema_lsp.engine.messages import Message
from rhema_lsp.engine.output import StopReason
from rhema_lsp.engine.provider import ProviderError
from rhema_lsp.engine.request import ChatParams, ModelRequest
from rhema_lsp.mcp.host import AskText, FormFiller, RunHost, text_asker
from rhema_lsp.mcp.pages import offer_page
from rhema_lsp.mcp.review import review
from rhema_lsp.tools.editor import DENY

__all__ = ["SAMPLING_MAX_TOKENS", "Callbacks", "callbacks"]

logger = logging.getLogger(__name__)

SAMPLING_MAX_TOKENS = 4096
"""The most tokens a server's sampling request may have the model write."""
USER_REJECTED = -1
"""The spec's error code for a sampling request the user rejected."""
ALLOW, ANSWER, CANCEL = "Allow", "Answer", "Cancel"
SKIP = "Skip"
"""The choice that leaves an optional choice field out of the form's answer."""
_PREVIEW = 400

HostOf = Callable[[], RunHost | None]
Callbacks = dict[str, Any]


def callbacks(server: str, host: HostOf) -> Callbacks:
    """The SDK ``Client`` keyword arguments answering ``server``'s requests."""

    async def list_roots(
        context: ClientRequestContext,
    ) -> mcp_types.ListRootsResult | mcp_types.ErrorData:
        current = host()
        roots = current.roots if current else ()
        return mcp_types.ListRootsResult(
            roots=[
                mcp_types.Root.model_validate(
                    {"uri": root.as_uri(), "name": root.name or str(root)}
                )
                for root in roots
            ]
        )

    async def sampling(
        context: ClientRequestContext, params: mcp_types.CreateMessageRequestParams
    ) -> mcp_types.CreateMessageResult | mcp_types.ErrorData:
        return await sample(server, host(), params)

    async def elicitation(
        context: ClientRequestContext, params: mcp_types.ElicitRequestParams
    ) -> mcp_types.ElicitResult | mcp_types.ErrorData:
        return await elicit(server, host(), params)

    return {
        "list_roots_callback": list_roots,
        "sampling_callback": sampling,
        "elicitation_callback": elicitation,
    }


async def sample(
    server: str, host: RunHost | None, params: mcp_types.CreateMessageRequestParams
) -> mcp_types.CreateMessageResult | mcp_types.ErrorData:
    """Ask the user, then the session's model (see the module docstring)."""
    if host is None or host.provider is None:
        return _error(f"no model to sample from for the MCP server {server}")
    messages, dropped = _messages(params.messages)
    if not messages:
        return _error("the sampling request has no text to send to the model")
    limit = min(params.max_tokens, SAMPLING_MAX_TOKENS)
    last = messages[-1].text
    shown = last if len(last) <= _PREVIEW else last[: _PREVIEW - 3] + "..."
    answer = await host.editor.confirm(
        f"The MCP server {server} asks to use the model ({host.model or 'the session model'}) "
        f"for at most {limit} tokens, with {len(messages)} message(s) ending: {shown!r}",
        [DENY, ALLOW],
    )
    if answer != ALLOW:
        logger.info("the user refused a sampling request of the MCP server %s", server)
        return mcp_types.ErrorData(code=USER_REJECTED, message="the user rejected the request")
    if dropped:
        logger.info("MCP server %s: %d non-text sampling block(s) not sent", server, dropped)
    request = ModelRequest(
        system=params.system_prompt,
        messages=messages,
        params=ChatParams(model=host.model, max_tokens=limit, temperature=params.temperature),
    )
    try:
        output = await host.provider.complete(request, _Discard())
    except ProviderError as exc:
        return _error(f"the model did not answer: {exc}")
    stop = "maxTokens" if output.stop_reason is StopReason.MAX_TOKENS else "endTurn"
    return mcp_types.CreateMessageResult(
        role="assistant",
        content=mcp_types.TextContent(type="text", text=output.message.text),
        model=host.model or "rhema-lsp",
        stop_reason=stop,
    )


async def elicit(
    server: str, host: RunHost | None, params: mcp_types.ElicitRequestParams
) -> mcp_types.ElicitResult | mcp_types.ErrorData:
    """Ask the user for a form or to open a page (see the module docstring)."""
    if host is None:
        return mcp_types.ElicitResult(action="cancel")
    if isinstance(params, mcp_types.ElicitRequestURLParams):
        action = await offer_page(server, host, params.url, params.message, params.elicitation_id)
        return mcp_types.ElicitResult(action=action)
    schema = params.requested_schema
    if isinstance(host.editor, FormFiller):
        values = await host.editor.fill_form(f"{server}: {params.message}", schema)
        if values is None:
            return mcp_types.ElicitResult(action="decline")
        return mcp_types.ElicitResult(action="accept", content=values)
    return await _form_by_questions(server, host, params.message, schema)


async def _form_by_questions(
    server: str, host: RunHost, message: str, schema: Mapping[str, Any]
) -> mcp_types.ElicitResult:
    properties = schema.get("properties")
    fields: dict[str, Any] = dict(properties) if isinstance(properties, Mapping) else {}
    required = set(schema.get("required") or [])
    ask_text = text_asker(host.editor)
    questions: list[_Question] = []
    for name, field in fields.items():
        if not isinstance(field, Mapping):
            continue
        choices = _choices(field, free_text=ask_text is not None)
        if not choices and ask_text is None:
            if name in required:
                logger.warning(
                    "MCP server %s asked for a form with the free-text field %s, which this "
                    "editor cannot show: declined",
                    server,
                    name,
                )
                return mcp_types.ElicitResult(action="decline")
            continue
        title = str(field.get("title") or field.get("description") or name)
        questions.append(_Question(name, title, choices, field, name in required))
    start = await host.editor.confirm(
        f"The MCP server {server} asks: {message} ({len(questions)} question(s))",
        [DENY, ANSWER],
    )
    if start != ANSWER:
        return mcp_types.ElicitResult(action="decline" if start == DENY else "cancel")
    content: dict[str, Any] = {}
    for question in questions:
        if question.choices or ask_text is None:
            skip = [] if question.required else [_skip_label(question.choices)]
            answer = await host.editor.confirm(
                f"{server}: {question.title}", [*question.choices, *skip, CANCEL]
            )
            if answer is None or answer == CANCEL:
                return mcp_types.ElicitResult(action="cancel")
            if answer in skip:
                continue  # left out of the answer
            content[question.name] = question.choices[answer]
            continue
        value = await _ask_field(server, question, ask_text)
        if value is _CANCELLED:
            return mcp_types.ElicitResult(action="cancel")
        if value is not _SKIPPED:
            content[question.name] = value
    action = await review(server, host.editor, message, schema, content)
    return mcp_types.ElicitResult(action=action, content=content if action == "accept" else None)


@dataclass(frozen=True, slots=True)
class _Question:
    """One field of a form, as it is asked: by ``confirm`` when it has
    ``choices``, else as text."""

    name: str
    title: str
    choices: dict[str, Any]
    field: Mapping[str, Any]
    required: bool


_CANCELLED, _SKIPPED = object(), object()
_TRIES = 3


async def _ask_field(server: str, question: _Question, ask_text: AskText) -> Any:
    """A free-text field's value, asked until it parses (at most
    :data:`_TRIES` times); ``_CANCELLED`` when dismissed, ``_SKIPPED`` when an
    optional field is left empty."""
    kind = question.field.get("type")
    default = question.field.get("default")
    options = _item_choices(question.field)
    if options:
        labels = {v: k for k, v in options.items()}
        shown = default if isinstance(default, list) else []
        value = ", ".join(str(labels.get(item, item)) for item in shown)
        hint = f" (one or more of {', '.join(options)}, separated by commas)"
    else:
        value = "" if default is None else str(default)
        hint = {"number": " (a number)", "integer": " (a whole number)"}.get(str(kind), "")
    described = question.field.get("description")
    about = f" — {described}" if described and described != question.title else ""
    prompt = f"{server}: {question.title}{hint}{about}"
    for _ in range(_TRIES):
        answer = await ask_text(prompt, value)
        if answer is None:
            return _CANCELLED
        text = answer.strip()
        if not text:
            if not question.required:
                return _SKIPPED
            prompt = f"{server}: {question.title}{hint} (required){about}"
            continue
        parsed = _parse(text, question.field)
        if parsed is not None:
            return parsed
        value, prompt = text, f"{server}: {question.title}{hint}: {text!r} is not one{about}"
    return _CANCELLED


def _parse(text: str, field: Mapping[str, Any]) -> Any:
    """``text`` as a value of ``field``'s JSON Schema type; ``None`` when it is not one."""
    kind = field.get("type")
    options = _item_choices(field)
    if options:
        by_label = {label.casefold(): value for label, value in options.items()}
        by_label.update({str(value).casefold(): value for value in options.values()})
        picked = [by_label.get(word.strip().casefold()) for word in text.split(",") if word.strip()]
        return picked if picked and None not in picked else None
    if kind == "integer":
        try:
            return int(text)
        except ValueError:
            return None
    if kind == "number":
        try:
            number = float(text)
        except ValueError:
            return None
        return int(number) if number.is_integer() and "." not in text else number
    return text


def _item_choices(field: Mapping[str, Any]) -> dict[str, Any]:
    """A multiple-choice field's (``type: array``) answers by label, or none."""
    items = field.get("items")
    if field.get("type") != "array" or not isinstance(items, Mapping):
        return {}
    return _choices(items)


def _skip_label(choices: Mapping[str, Any]) -> str:
    """:data:`SKIP`, unless a choice is called that (or :data:`CANCEL`)."""
    label = SKIP
    while label in choices or label == CANCEL:
        label = f"{label} (leave it out)"
    return label


def _choices(field: Mapping[str, Any], *, free_text: bool = False) -> dict[str, Any]:
    """A field's answers by label, or none when it is free text (with
    ``free_text``, a field with only a default is free text too)."""
    kind = field.get("type")
    if kind == "boolean":
        return {"Yes": True, "No": False}
    options = field.get("oneOf") or field.get("anyOf")
    if isinstance(options, list) and all(isinstance(o, Mapping) and "const" in o for o in options):
        return {str(o.get("title") or o["const"]): o["const"] for o in options}
    values = field.get("enum")
    if isinstance(values, list) and values:
        names = field.get("enumNames")
        labels = names if isinstance(names, list) and len(names) == len(values) else values
        return {str(label): value for label, value in zip(labels, values, strict=True)}
    if "default" in field and not free_text:
        return {f"{field['default']} (default)": field["default"]}
    return {}


def _messages(sampled: list[mcp_types.SamplingMessage]) -> tuple[list[Message], int]:
    """The text of the server's messages as engine messages, and how many
    blocks were not text."""
    messages, dropped = [], 0
    for item in sampled:
        texts = []
        for block in item.content_as_list:
            if isinstance(block, mcp_types.TextContent):
                texts.append(block.text)
            else:
                dropped += 1
        if texts:
            text = "\n".join(texts)
            messages.append(Message.user(text) if item.role == "user" else Message.assistant(text))
    return messages, dropped


def _error(message: str) -> mcp_types.ErrorData:
    return mcp_types.ErrorData(code=mcp_types.INTERNAL_ERROR, message=message)


class _Discard:
    """A sink for a sampling request's stream: only the finished answer is used."""

    def emit(self, event: Event) -> None:
        """Drop ``event``."""
