"""The settings every editor test gives the server: the fake model server,
on the OpenAI wire, in edit mode, completion as you type off (left on, a
test that types would have its scripted replies used up by completions and
next-edit suggestions; the inline tests turn it on)."""

from __future__ import annotations

from typing import Any

__all__ = ["settings_for"]


def settings_for(base_url: str, **extra: Any) -> dict[str, Any]:
    """The rhema settings (``initializationOptions`` or the plugin's
    ``settings``) that point the server at the fake model server."""
    return {
        "provider": "custom",
        "protocol": "openai",
        "baseUrl": base_url,
        "model": "fake-model",
        "mode": "edit",
        "inlineCompletion": False,
        **extra,
    }
