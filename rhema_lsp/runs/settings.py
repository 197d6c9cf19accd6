"""The server's settings: one typed, defaulted structure, validated field by
field (and light to import: the server parses them before anything else loads).

Settings arrive as ``initializationOptions`` and as the ``rhema`` section of
``workspace/configuration`` (merged in that order, later wins). A field that
does not validate is reported by name and falls back to its default: the
server never refuses to start over a typo. API keys are never settings.
``mcpServers`` is validated entry by entry: a bad entry is named and dropped,
the others are used.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from rhema_lsp.engine.truncate import TOOL_RESULT_CAP
from rhema_lsp.mcp import McpServerConfig, parse_servers
from rhema_lsp.mcp.config import DEFAULT_START_TIMEOUT_S
from rhema_lsp.vocabulary import Mode

__all__ = ["LanguageServerConfig", "Mode", "Settings", "SettingsProblem", "parse_settings"]

Thinking = Literal["default", "low", "medium", "high"]

_KEYS_NEVER_SETTINGS = ("apiKey", "api_key", "key", "token")


class LanguageServerConfig(BaseModel):
    """One entry of ``languageServers``: the command that starts the server
    on stdio (``{"command": ["basedpyright-langserver", "--stdio"]}``), and
    ``initializationOptions`` merged over the agent's (which keep a server
    from running the repository's code: ``rhema_lsp.language.options``)."""

    model_config = ConfigDict(extra="ignore", frozen=True, populate_by_name=True)

    command: tuple[str, ...] = Field(min_length=1)
    initialization_options: dict[str, Any] | None = Field(
        default=None, alias="initializationOptions"
    )

    @field_validator("command")
    @classmethod
    def _runnable(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if not value[0].strip() or any("\x00" in part for part in value):
            raise ValueError("the command's first word must name a program (and no NUL bytes)")
        return value


class Settings(BaseModel):
    """Every setting of the contract, with its default."""

    model_config = ConfigDict(populate_by_name=True, extra="ignore", frozen=True)

    provider: str | None = None
    model: str | None = None
    base_url: str | None = Field(default=None, alias="baseUrl")
    protocol: Literal["openai", "anthropic", "gemini"] | None = None
    thinking: Thinking = "default"
    vision: bool | None = None
    max_tokens: int = Field(default=4096, alias="maxTokens", ge=16, le=1_000_000)
    max_steps: int = Field(default=25, alias="maxSteps", ge=1, le=500)
    mode: Mode = "edit"
    review: bool = False
    session_store: Literal["workspace", "user"] = Field(default="workspace", alias="sessionStore")
    command_allowlist: tuple[str, ...] = Field(default=(), alias="commandAllowlist")
    sandbox: Literal["auto", "require", "off"] = "auto"
    sandbox_network: bool = Field(default=False, alias="sandboxNetwork")
    sandbox_writable: tuple[str, ...] = Field(default=(), alias="sandboxWritable")
    approval_timeout: float = Field(default=120, alias="approvalTimeout", ge=1, le=86_400)
    response_timeout: float = Field(default=600, alias="responseTimeout", ge=10, le=86_400)
    min_stream_rate: float = Field(default=128, alias="minStreamRate", ge=0, le=1_000_000)
    log_level: Literal["error", "warning", "info", "debug"] = Field(
        default="warning", alias="logLevel"
    )
    context_window: int | None = Field(default=None, alias="contextWindow", ge=512, le=100_000_000)
    compact_threshold: float = Field(default=0.8, alias="compactThreshold", ge=0.2, le=0.95)
    mcp_servers: dict[str, McpServerConfig] = Field(default_factory=dict, alias="mcpServers")
    mcp_modes: tuple[Mode, ...] = Field(default=("agent",), alias="mcpModes")
    mcp_start_timeout: float = Field(
        default=DEFAULT_START_TIMEOUT_S, alias="mcpStartTimeout", ge=1, le=600
    )
    diagnostics_wait: float = Field(default=1.5, alias="diagnosticsWait", ge=0, le=60)
    tool_output_cap: int = Field(
        default=TOOL_RESULT_CAP, alias="toolOutputCap", ge=4_000, le=1_000_000
    )
    language_servers: dict[str, LanguageServerConfig] = Field(
        default_factory=dict, alias="languageServers"
    )
    inline_completion: bool = Field(default=True, alias="inlineCompletion")
    completion_provider: str | None = Field(default=None, alias="completionProvider")
    completion_model: str | None = Field(default=None, alias="completionModel")
    completion_base_url: str | None = Field(default=None, alias="completionBaseUrl")
    completion_debounce: int = Field(default=75, alias="completionDebounce", ge=50, le=2000)

    def language_commands(self) -> dict[str, tuple[str, ...]]:
        """``languageServers`` as commands by language id."""
        return {language: entry.command for language, entry in self.language_servers.items()}

    def language_options(self) -> dict[str, dict[str, Any]]:
        """``languageServers``' ``initializationOptions`` by language id."""
        return {
            language: entry.initialization_options
            for language, entry in self.language_servers.items()
            if entry.initialization_options is not None
        }

    @field_validator("thinking", mode="before")
    @classmethod
    def _parse_thinking(cls, value: object) -> object:
        if isinstance(value, str):
            level = value.strip().lower()
            if level not in ("default", "low", "medium", "high"):
                raise ValueError("expected one of default, low, medium, high")
            return level
        return value

    @field_validator(
        "provider",
        "model",
        "base_url",
        "completion_provider",
        "completion_model",
        "completion_base_url",
        mode="before",
    )
    @classmethod
    def _blank_is_unset(cls, value: object) -> object:
        if isinstance(value, str) and not value.strip():
            return None
        return value.strip() if isinstance(value, str) else value


@dataclass(frozen=True, slots=True)
class SettingsProblem:
    """One setting that did not validate, and what was used instead."""

    field: str
    message: str
    fallback: str = "using the default"

    def __str__(self) -> str:
        return f"rhema.{self.field}: {self.message}; {self.fallback}"


def parse_settings(*layers: Mapping[str, Any] | None) -> tuple[Settings, list[SettingsProblem]]:
    """Merge settings layers (later wins) and validate them field by field.

    Parameters
    ----------
    layers
        Raw settings objects, e.g. ``initializationOptions`` then the
        ``rhema`` configuration section; ``None`` and non-objects are skipped.

    Returns
    -------
    tuple of Settings and list of SettingsProblem
        The settings, with every invalid field at its default, and one
        problem per invalid (or refused) field.
    """
    merged: dict[str, Any] = {}
    for layer in layers:
        if isinstance(layer, Mapping):
            merged.update({k: v for k, v in layer.items() if v is not None})
    problems: list[SettingsProblem] = []
    for key in [k for k in merged if k in _KEYS_NEVER_SETTINGS]:
        del merged[key]
        problems.append(
            SettingsProblem(key, "API keys are read from the server's environment only, ignored")
        )
    if "mcpServers" in merged:
        servers, invalid = parse_servers(merged["mcpServers"])
        merged["mcpServers"] = servers
        problems += [
            SettingsProblem(where, message, "this server is not used") for where, message in invalid
        ]
    while True:
        try:
            return Settings.model_validate(merged), problems
        except ValidationError as exc:
            bad = {str(error["loc"][0]) for error in exc.errors() if error["loc"]}
            for error in exc.errors():
                if error["loc"]:
                    problems.append(SettingsProblem(str(error["loc"][0]), error["msg"]))
            if not bad & set(merged):
                raise
            for key in bad:
                merged.pop(key, None)
