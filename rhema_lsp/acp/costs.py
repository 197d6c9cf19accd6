"""A session's cost, as ACP's ``usage_update`` carries it.

Each ACP session has a :class:`CostMeter`: every model call's tokens (the
engine's ``step_end`` usage) are priced with the price of the model that
answered (:func:`~rhema_lsp.providers.prices.price_of`: the user config
file's ``prices``, else the known table) and added up, so the cost a
``usage_update`` carries is the session's on this connection so far (the
protocol's "cumulative session cost"), in the price's currency.

The rules: no price known, no cost (the update goes without one, never a
guess); a call of a model without a price adds nothing; a change of
currency (a model priced in another) starts the sum again in the new one.
The user's prices are read from the user config file for each prompt (in a
worker thread: the read blocks), a hostile entry left out with a warning.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

from acp.schema import Cost

from rhema_lsp.engine import Usage
from rhema_lsp.mcp.userfile import user_config_path
from rhema_lsp.providers.prices import Price, parse_prices

__all__ = ["CostMeter", "user_prices"]

logger = logging.getLogger(__name__)

_MAX_BYTES = 1 << 20


class CostMeter:
    """A session's cost so far (see the module docstring)."""

    def __init__(self) -> None:
        self.price: Price | None = None
        """The price of the model answering now (``None``: unknown)."""
        self.amount = 0.0
        self.currency: str | None = None

    def add(self, usage: Usage) -> bool:
        """Price one call's ``usage``; whether the sum changed."""
        price = self.price
        if price is None:
            return False
        if self.currency != price.currency:
            self.amount, self.currency = 0.0, price.currency
        self.amount += price.of(usage.input, usage.output)
        return True

    def cost(self) -> Cost | None:
        """The sum as ACP's ``Cost``, once a priced call was counted."""
        if self.currency is None:
            return None
        return Cost(amount=round(self.amount, 6), currency=self.currency)


def user_prices(path: Path | None = None) -> dict[str, Price]:
    """The user config file's ``prices`` (blocking; none when it has none
    or cannot be read)."""
    path = path or user_config_path()
    try:
        with path.open("rb") as file:
            raw = json.loads(file.read(_MAX_BYTES + 1)[:_MAX_BYTES])
    except (OSError, ValueError):
        return {}
    prices, problems = parse_prices(raw.get("prices") if isinstance(raw, dict) else None)
    for problem in problems:
        logger.warning("%s: %s", path, problem)
    return prices
