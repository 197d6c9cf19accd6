"""The caps on images sent by value: at most 20 per prompt, each at most
20 MiB of image as base64; anything more is refused by the contract before a
handler sees it."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from rhema_lsp.contract import StepArgs, TurnArgs
from rhema_lsp.contract.arguments import IMAGE_DATA_MAX


@pytest.mark.parametrize("model", [TurnArgs, StepArgs])
def test_images_by_value_are_capped(model: type[TurnArgs] | type[StepArgs]) -> None:
    ok = model.model_validate({"prompt": "x", "images": [{"data": "iVBO", "name": "a"}] * 20})
    assert len(ok.images) == 20
    with pytest.raises(ValidationError, match="images"):
        model.model_validate({"prompt": "x", "images": [{"data": "iVBO"}] * 21})
    with pytest.raises(ValidationError, match="data"):
        model.model_validate({"prompt": "x", "images": [{"data": "A" * (IMAGE_DATA_MAX + 1)}]})
    with pytest.raises(ValidationError, match="data"):
        model.model_validate({"prompt": "x", "images": [{"data": ""}]})
    with pytest.raises(ValidationError, match="mimeType"):
        model.model_validate({"prompt": "x", "images": [{"data": "iVBO", "mimeType": "x"}]})


def test_the_data_cap_holds_the_largest_image_taken() -> None:
    from rhema_lsp.engine import IMAGE_MAX_BYTES

    assert IMAGE_MAX_BYTES * 4 // 3 + 4 <= IMAGE_DATA_MAX
