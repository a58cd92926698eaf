"""DLQ details: bounded in bytes, values quoted as short JSON."""

from __future__ import annotations

from decimal import Decimal

import pytest

from fraudstream_rules.dead_letters import MAX_DETAIL_BYTES, PREVIEW_CHARS, DeadLetterError, Rejection, bounded, preview


@pytest.mark.parametrize("text", ["", "short", "x" * MAX_DETAIL_BYTES, "\u00e9" * (MAX_DETAIL_BYTES // 2)])
def test_bounded_keeps_what_fits(text: str) -> None:
    assert bounded(text) == text


@pytest.mark.parametrize(
    "text", ["x" * (MAX_DETAIL_BYTES + 1), "\u00e9" * MAX_DETAIL_BYTES, "\U0001d11e" * 600, "ab\u20ac" * 1000]
)
def test_bounded_cuts_at_a_character_boundary_within_the_limit(text: str) -> None:
    cut = bounded(text)
    assert len(cut.encode("utf-8")) <= MAX_DETAIL_BYTES
    assert cut.endswith("\u2026") and text.startswith(cut[:-1])
    assert len(cut.encode("utf-8")) > MAX_DETAIL_BYTES - 7  # nothing more is cut than the last character needs


def test_bounded_escapes_lone_surrogates() -> None:
    assert bounded("a\ud800") == "a\\ud800"


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ("abc", '"abc"'),
        (Decimal("1.50"), "1.50"),
        ([1, None, True], "[1,null,true]"),
        ("x" * 100, '"' + "x" * (PREVIEW_CHARS - 1) + "\u2026"),
        ("\U0001d11e" * 100, '"' + "\U0001d11e" * (PREVIEW_CHARS - 1) + "\u2026"),
    ],
)
def test_preview_is_json_cut_to_a_number_of_code_points(value: object, text: str) -> None:
    assert preview(value) == text


def test_rejection_of_bounds_its_detail() -> None:
    rejection = Rejection.of(DeadLetterError.FUTURE, "y" * 5000)
    assert rejection.error == "future" and len(rejection.detail.encode()) <= MAX_DETAIL_BYTES
