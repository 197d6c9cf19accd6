"""The command line checks before the server starts what the settings model
would refuse, and loads that model only when a flag it may refuse is given:
a flag that is not :attr:`~rhema_lsp.cli.flags.SettingFlag.refusable` takes
only values the model accepts as they are (a choice, or any string)."""

from __future__ import annotations

import argparse

import pytest

from rhema_lsp.cli.flags import SETTING_FLAGS, SettingFlag, settings_from
from rhema_lsp.headless.errors import UsageError
from rhema_lsp.runs.settings import parse_settings

STRINGS = ["", " ", "x", " padded ", "é" * 300, "a\x00b", "${env:HOME}", "-1", "1e9"]

FLAGS = [item for item in SETTING_FLAGS if item.flag is not None]


def _values(item: SettingFlag) -> list[object]:
    choices = item.options.get("choices")
    if choices is not None:
        return list(choices)
    if item.options.get("action") is argparse.BooleanOptionalAction:
        return [True, False]  # --flag, --no-flag
    if item.options.get("action") == "append":
        lists: list[object] = [[value] for value in STRINGS]
        return [*lists, STRINGS]
    return list(STRINGS)


@pytest.mark.parametrize("item", [f for f in FLAGS if not f.refusable], ids=lambda f: f.flag)
def test_a_flag_that_is_not_refusable_takes_only_values_the_model_accepts(
    item: SettingFlag,
) -> None:
    for value in _values(item):
        _, problems = parse_settings({item.setting: value})
        assert problems == [], (item.flag, value)


@pytest.mark.parametrize("item", [f for f in FLAGS if f.refusable], ids=lambda f: f.flag)
def test_a_refusable_flag_is_checked_before_the_server_starts(item: SettingFlag) -> None:
    args = argparse.Namespace(**{item.dest: -(10**12)})
    with pytest.raises(UsageError, match=item.flag or ""):
        settings_from(args)
