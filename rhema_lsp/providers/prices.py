"""What a model's tokens cost: the one price table, and the user's own.

:data:`KNOWN_PRICES` holds the list prices of the presets' hosted models and
their kin, per million tokens (input, output), by model-id prefix (the
longest prefix wins; a ``vendor/`` prefix as OpenRouter spells ids is
ignored), as :mod:`.windows` matches windows. The user overrides or adds
prices in the user config file (``"prices": {"my-model": {"input": 0.5,
"output": 1.5, "currency": "EUR"}}``, :func:`parse_prices`): a model named
there, by its exact id or a prefix, wins over the table.

The rules: a model matching nothing has no price (``None``): the caller
says nothing of cost rather than a guess; a local server's model is in no
table (it costs nothing the agent can count) unless the user prices it; a
hostile entry (a negative or non-number price, an unknown field type) is
left out and named in the problems, never raised. Plain data and
arithmetic, no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["KNOWN_PRICES", "Price", "parse_prices", "price_of"]


@dataclass(frozen=True, slots=True)
class Price:
    """A model's price per million tokens, in ``currency`` (ISO 4217, or a
    unit such as ``credits``)."""

    input: float
    output: float
    currency: str = "USD"

    def of(self, input_tokens: int, output_tokens: int) -> float:
        """What ``input_tokens`` and ``output_tokens`` cost."""
        return (input_tokens * self.input + output_tokens * self.output) / 1_000_000


KNOWN_PRICES: tuple[tuple[str, Price], ...] = (
    ("claude-opus-4-5", Price(5.0, 25.0)),
    ("claude-opus-4", Price(15.0, 75.0)),
    ("claude-sonnet-4", Price(3.0, 15.0)),
    ("claude-3-7-sonnet", Price(3.0, 15.0)),
    ("claude-haiku-4", Price(1.0, 5.0)),
    ("claude-3-5-haiku", Price(0.8, 4.0)),
    ("gpt-5", Price(1.25, 10.0)),
    ("gpt-5-mini", Price(0.25, 2.0)),
    ("gpt-5-nano", Price(0.05, 0.4)),
    ("gpt-4.1", Price(2.0, 8.0)),
    ("gpt-4.1-mini", Price(0.4, 1.6)),
    ("gpt-4.1-nano", Price(0.1, 0.4)),
    ("gpt-4o", Price(2.5, 10.0)),
    ("gpt-4o-mini", Price(0.15, 0.6)),
    ("o3", Price(2.0, 8.0)),
    ("o4-mini", Price(1.1, 4.4)),
    ("gemini-2.5-pro", Price(1.25, 10.0)),
    ("gemini-2.5-flash", Price(0.3, 2.5)),
    ("gemini-2.5-flash-lite", Price(0.1, 0.4)),
    ("llama-3.3-70b-versatile", Price(0.59, 0.79)),
)
"""List prices (USD per million input and output tokens) by model-id prefix."""


def _match(name: str, table: Mapping[str, Price] | tuple[tuple[str, Price], ...]) -> Price | None:
    items = table.items() if isinstance(table, Mapping) else table
    best: tuple[int, Price] | None = None
    for prefix, price in items:
        if name.startswith(prefix.lower()) and (best is None or len(prefix) > best[0]):
            best = (len(prefix), price)
    return best[1] if best is not None else None


def price_of(model: str, overrides: Mapping[str, Price] | None = None) -> Price | None:
    """The price of ``model``: the user's (exact id, else longest prefix),
    else the table's; ``None`` when neither knows it."""
    if overrides:
        exact = {key.lower(): price for key, price in overrides.items()}.get(model.lower())
        found = exact or _match(model.lower(), overrides)
        if found is not None:
            return found
    return _match(model.rsplit("/", 1)[-1].lower(), KNOWN_PRICES)


def _amount(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if 0 <= value < 1e6 else None


def parse_prices(raw: Any) -> tuple[dict[str, Price], list[str]]:
    """The user config file's ``prices`` (see the module docstring), and a
    sentence for each entry left out."""
    if raw is None:
        return {}, []
    if not isinstance(raw, dict):
        return {}, ["prices must be an object of model ids"]
    prices: dict[str, Price] = {}
    problems: list[str] = []
    for model, entry in raw.items():
        if not isinstance(entry, dict) or not model.strip():
            problems.append(f"prices: {model!r} must be an object with input and output")
            continue
        input_, output = _amount(entry.get("input")), _amount(entry.get("output"))
        currency = entry.get("currency", "USD")
        if input_ is None or output is None:
            problems.append(f"prices: {model!r} needs input and output, numbers of 0 or more")
        elif not isinstance(currency, str) or not 0 < len(currency) <= 16:
            problems.append(f"prices: {model!r} has a currency that is not a short text")
        else:
            prices[model.strip()] = Price(input_, output, currency)
    return prices, problems
