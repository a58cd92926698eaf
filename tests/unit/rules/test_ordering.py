"""Order across partitions (CONTRACT section 6, reorderWaitMs): the JVM ReorderBuffer against a reference model,
and two partitions read with skew, evaluated with and without the wait, against the oracle.

The reference model is the contract's rule written plainly: an item is due once held `wait_ms`; at each moment
every held item up to the latest due one (in ingestion order: timestamp, partition, offset) leaves, in that order.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Sequence
from dataclasses import dataclass

from hypothesis import given, settings
from hypothesis import strategies as st

from fraudstream_rules.model import Rule, parse_spec
from fraudstream_rules.transactions import Transaction, parse_transaction

from .jvm_engine import JvmEngine
from .oracle import Outcome, Record, RuleRecord, run_oracle
from .test_engine_vs_oracle import jvm_outcome

Key = tuple[int, int, int]  # (ingestion timestamp, partition, offset)
END_MS = 2**63 - 1
PROPERTY = settings(max_examples=150, deadline=None)


def reference_release(arrivals: Sequence[tuple[int, Key]], wait_ms: int) -> list[tuple[Key, int]]:
    """(key, released at) in release order, for arrivals (arrived at, key) in arrival order."""
    held: list[tuple[Key, int]] = []
    out: list[tuple[Key, int]] = []

    def release(now_ms: int) -> None:
        due = [key for key, arrived_ms in held if arrived_ms + wait_ms <= now_ms]
        if due:
            last = max(due)
            out.extend((key, now_ms) for key in sorted(key for key, _ in held if key <= last))
            held[:] = [(key, arrived_ms) for key, arrived_ms in held if key > last]

    for arrived_ms, key in arrivals:
        held.append((key, arrived_ms))
        release(arrived_ms)
    release(END_MS)
    return out


def jvm_release(jvm: JvmEngine, arrivals: Sequence[tuple[int, Key]], wait_ms: int) -> list[tuple[Key, int]]:
    request = {"reorder": {"waitMs": wait_ms, "arrivals": [[at, *key] for at, key in arrivals]}}
    released = jvm.call(json.dumps(request))["released"]
    assert isinstance(released, list)
    return [((ts, partition, offset), at) for ts, partition, offset, at in released]


@st.composite
def skewed_arrivals(draw: st.DrawFn) -> tuple[list[tuple[int, Key]], int]:
    """Records of two partitions, ingested in strictly increasing time, read with a per-partition delay (and
    jitter that keeps each partition in offset order), merged in arrival order; and the largest disorder."""
    skews = (draw(st.integers(0, 300)), draw(st.integers(0, 300)))
    offsets = [0, 0]
    last_arrival = [0, 0]
    arrivals: list[tuple[int, Key]] = []
    ts_ms = 1_000
    for _ in range(draw(st.integers(1, 40))):
        ts_ms += draw(st.integers(1, 50))
        partition = draw(st.integers(0, 1))
        at = max(last_arrival[partition], ts_ms + skews[partition] + draw(st.integers(0, 20)))
        last_arrival[partition] = at
        arrivals.append((at, (ts_ms, partition, offsets[partition])))
        offsets[partition] += 1
    arrivals.sort(key=lambda arrival: (arrival[0], arrival[1][1], arrival[1][2]))
    return arrivals, abs(skews[0] - skews[1]) + 20


@PROPERTY
@given(skewed_arrivals(), st.sampled_from([0, 1, 10, 100, 400]))
def test_the_jvm_buffer_releases_as_the_reference_model(
    jvm_engine: JvmEngine, case: tuple[list[tuple[int, Key]], int], wait_ms: int
) -> None:
    arrivals, _ = case
    assert jvm_release(jvm_engine, arrivals, wait_ms) == reference_release(arrivals, wait_ms)


@PROPERTY
@given(skewed_arrivals())
def test_a_wait_covering_the_skew_releases_in_ingestion_order(case: tuple[list[tuple[int, Key]], int]) -> None:
    arrivals, disorder_ms = case
    released = [key for key, _ in reference_release(arrivals, disorder_ms)]
    assert released == sorted(key for _, key in arrivals)
    immediately = [key for key, _ in reference_release(arrivals, 0)]
    assert immediately == [key for _, key in arrivals], "without a wait, records go in arrival order"


# ---- two partitions read with skew, evaluated ----------------------------------------------------------------


def _rule(rule_id: str, keys: list[str], aggregator: str, limit: str) -> RuleRecord:
    spec: dict[str, object] = {
        "groupingKeyNames": keys,
        "aggregatorFunctionType": aggregator,
        "limitOperatorType": "GREATER_EQUAL",
        "limit": limit,
        "windowMinutes": 5,
    }
    if aggregator != "COUNT":
        spec["aggregateFieldName"] = "paymentAmount"
    return RuleRecord(rule_id, Rule(rule_id, 1, "u", parse_spec(spec)), 0)


RULES = (
    _rule("ns/max-beneficiary", ["beneficiaryId"], "MAX", "5"),
    _rule("ns/sum-payer", ["payerId"], "SUM", "8"),
    _rule("ns/count-type", ["paymentType"], "COUNT", "3"),
)


@dataclass(frozen=True)
class Stream:
    arrivals: list[tuple[int, Key]]
    transactions: dict[Key, Transaction]
    disorder_ms: int


@st.composite
def streams(draw: st.DrawFn) -> Stream:
    arrivals, disorder_ms = draw(skewed_arrivals())
    transactions = {}
    for index, (_, key) in enumerate(arrivals):
        ts_ms, partition, offset = key
        body = {
            "transactionId": f"t{index}",
            "eventTime": 1_700_000_000_000 + ts_ms,
            "payerId": draw(st.sampled_from(["p1", "p2"])),
            "beneficiaryId": draw(st.sampled_from(["b1", "b2"])),
            "paymentType": draw(st.sampled_from(["CRD", "CSH"])),
            "paymentAmount": draw(st.sampled_from(["1", "2", "6", "9"])),
        }
        transactions[key] = parse_transaction(json.dumps(body).encode(), 1_700_000_000_000 + ts_ms, partition, offset)
    return Stream(arrivals, transactions, disorder_ms)


def evaluated_in(jvm: JvmEngine, stream: Stream, order: Sequence[Key]) -> tuple[list[Outcome], list[Outcome]]:
    """The JVM engine's and the oracle's outcomes for the transactions evaluated in `order`, in that order."""
    records: list[Record] = [*RULES, *(stream.transactions[key] for key in order)]
    return [jvm_outcome(o) for o in jvm.run(records, lateness_ms=60_000)], run_oracle(records, 60_000)


@PROPERTY
@given(streams())
def test_with_the_wait_two_skewed_partitions_evaluate_as_if_read_in_ingestion_order(
    jvm_engine: JvmEngine, stream: Stream
) -> None:
    order = [key for key, _ in reference_release(stream.arrivals, stream.disorder_ms)]
    actual, expected = evaluated_in(jvm_engine, stream, order)
    in_ingestion_order = run_oracle(
        [*RULES, *(stream.transactions[key] for key in sorted(stream.transactions))], 60_000
    )
    assert actual == expected == in_ingestion_order
    assert not any(outcome.out_of_order for outcome in expected)


@PROPERTY
@given(streams())
def test_without_the_wait_they_evaluate_in_arrival_order_and_disorder_is_counted(
    jvm_engine: JvmEngine, stream: Stream
) -> None:
    order = [key for key, _ in reference_release(stream.arrivals, 0)]
    actual, expected = evaluated_in(jvm_engine, stream, order)
    assert actual == expected
    ingestion_order_broken = any(later < earlier for earlier, later in itertools.pairwise(order))
    counted = any(outcome.out_of_order for outcome in expected)
    assert counted <= ingestion_order_broken  # counted only where the order was broken, within a group
