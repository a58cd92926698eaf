from __future__ import annotations

import pytest

from bench.run import _security_note


@pytest.mark.parametrize(
    ("result", "note"),
    [({}, ""), ({"kafka_security": "plaintext"}, ""), ({"kafka_security": "sasl_ssl"}, "[Kafka sasl_ssl]"),
     ({"kafka_security": "mtls"}, "[Kafka mtls]")],
)  # fmt: skip
def test_a_secured_run_is_marked_in_the_benchmarks_table(result: dict[str, object], note: str) -> None:
    assert _security_note(result) == note
