"""The schemas' "not only white space" pattern says what memory_core's checks do."""

from __future__ import annotations

import re
import sys

import pytest
from pydantic import BaseModel, Field, ValidationError

from memory_core.brain.schema import NOT_BLANK


def test_the_pattern_matches_exactly_the_characters_strip_keeps() -> None:
    disagree = [
        hex(i)
        for i in range(sys.maxunicode + 1)
        if chr(i).isspace() == bool(re.fullmatch(NOT_BLANK, chr(i)))
    ]
    assert disagree == []


class _Text(BaseModel):
    text: str = Field(pattern=NOT_BLANK)


@pytest.mark.parametrize("blank", [" ", "\t\n", "\x1f", "\x85", "\u3000 \u2028"])
def test_pydantic_refuses_what_strip_empties(blank: str) -> None:
    with pytest.raises(ValidationError):
        _Text(text=blank)


@pytest.mark.parametrize("text", ["a", " x ", "\ufeff", "\x1fé"])
def test_pydantic_accepts_what_strip_keeps(text: str) -> None:
    assert text.strip()
    assert _Text(text=text).text == text
