"""Micro-benchmark: cost per in-order event as one key's window grows from 1 000 to 100 000 events.

For each aggregator and window size it feeds a single key events in event-time order, spaced so the
rule's window (5 minutes) holds that many events, first filling the window and the lateness span,
then timing batches. It reports the median CPU nanoseconds per event over the batches (CPU time, so other load on the
machine does not blur the figures), for the whole
`Engine.on_transaction` (transactions pre-parsed) and for the group window alone (insert + query).
The figures should stay roughly flat across sizes: the aggregates are incremental.

Usage: .venv/bin/python bench/window_cost.py [--batches 5] [--batch-events 5000]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from decimal import Decimal

from fraudstream_rules.aggregates import AggregatorKind, StoredEvent, WindowSpec
from fraudstream_rules.engine import DEFAULT_LATENESS_MS, Engine, InMemoryGroupStore
from fraudstream_rules.model import AggregatorFunction, Rule, parse_spec
from fraudstream_rules.transactions import Transaction
from fraudstream_rules.windows import GroupWindow

SIZES = (1_000, 10_000, 100_000)
AGGREGATORS = (AggregatorFunction.SUM, AggregatorFunction.AVG, AggregatorFunction.MIN, AggregatorFunction.MAX)
WINDOW_MINUTES = 5
WINDOW_MS = WINDOW_MINUTES * 60_000
T0_MS = 1_700_000_000_000


def amounts(count: int, seed: int) -> list[Decimal]:
    rng = random.Random(seed)
    return [Decimal(rng.randrange(1, 1_000_000)) / 100 for _ in range(count)]


def detector_ns_per_event(function: AggregatorFunction, size: int, batches: int, batch_events: int) -> float:
    spacing_ms = WINDOW_MS // size
    detector = Engine()
    spec = parse_spec(
        {
            "groupingKeyNames": ["payerId"],
            "aggregatorFunctionType": function.value,
            "aggregateFieldName": "paymentAmount",
            "limitOperatorType": "GREATER",
            "limit": "1e50",
            "windowMinutes": WINDOW_MINUTES,
        }
    )
    detector.on_rule("bench/rule", Rule("bench/rule", 1, "uid", spec), T0_MS)
    store = InMemoryGroupStore()
    warmup = size + DEFAULT_LATENESS_MS // spacing_ms
    values = amounts(warmup + batches * batch_events, seed=size)
    transactions = [
        Transaction(
            fields={"transactionId": f"t{i}", "eventTime": T0_MS + i * spacing_ms, "payerId": "p1", "paymentAmount": v},
            raw=b"",
            event_time_ms=T0_MS + i * spacing_ms,
            ingest_ts_ms=T0_MS + i * spacing_ms + 1,
            partition=0,
            offset=i,
        )
        for i, v in enumerate(values)
    ]
    for tx in transactions[:warmup]:
        detector.on_transaction(tx, store, 0)
    timings = []
    for batch in range(batches):
        start = warmup + batch * batch_events
        began = time.process_time_ns()
        for tx in transactions[start : start + batch_events]:
            detector.on_transaction(tx, store, 0)
        timings.append((time.process_time_ns() - began) / batch_events)
    (window,) = store.windows.values()
    assert len(window) == warmup + 1, (len(window), warmup)  # the window plus the lateness span
    return statistics.median(timings)


def window_ns_per_event(function: AggregatorFunction, size: int, batches: int, batch_events: int) -> float:
    spacing_ms = WINDOW_MS // size
    kind = AggregatorKind.of(function)
    window = GroupWindow(("paymentAmount",))

    def value_of(event: StoredEvent) -> Decimal | None:
        value = event.values[0]
        return value if isinstance(value, Decimal) else None

    window.prepare(("paymentAmount",), {"r": WindowSpec("r", kind, WINDOW_MS, DEFAULT_LATENESS_MS, value_of)})
    warmup = size + DEFAULT_LATENESS_MS // spacing_ms
    values = amounts(warmup + batches * batch_events, seed=size)
    events = [
        StoredEvent(T0_MS + i * spacing_ms, T0_MS + i * spacing_ms + 1, 0, i, 0, (v,)) for i, v in enumerate(values)
    ]

    def feed(chunk: list[StoredEvent]) -> None:
        for event in chunk:
            window.insert(event)
            window.aggregate("r", event.event_time_ms)
            window.set_floor(event.event_time_ms - WINDOW_MS - DEFAULT_LATENESS_MS)

    feed(events[:warmup])
    timings = []
    for batch in range(batches):
        chunk = events[warmup + batch * batch_events : warmup + (batch + 1) * batch_events]
        began = time.process_time_ns()
        feed(chunk)
        timings.append((time.process_time_ns() - began) / batch_events)
    assert len(window) == warmup + 1, (len(window), warmup)  # the window plus the lateness span
    return statistics.median(timings)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, default=5)
    parser.add_argument("--batch-events", type=int, default=5_000)
    args = parser.parse_args()
    header = f"{'aggregator':<10} {'measured':<20}" + "".join(f"{f'{size:,} events':>16}" for size in SIZES)
    print(f"CPU ns/event, median of {args.batches} batches of {args.batch_events:,} in-order events, one key")
    print(header)
    print("-" * len(header))
    for function in AGGREGATORS:
        for label, measure in (("Engine", detector_ns_per_event), ("GroupWindow only", window_ns_per_event)):
            cells = "".join(f"{measure(function, size, args.batches, args.batch_events):>16,.0f}" for size in SIZES)
            print(f"{function.value:<10} {label:<20}{cells}", flush=True)


if __name__ == "__main__":
    main()
