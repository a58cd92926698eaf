"""A client for the JVM evaluator's test harness (`io.fraudstream.evaluator.core.Harness`).

The harness runs whole scenarios through the Java port of the evaluation core: one JSON request line per scenario
on its stdin, one JSON response line back. `JvmEngine` keeps one harness process for the test session and turns
the oracle's records into requests and the responses into `JvmOutcome`s (alerts as parsed JSON, numbers exact).
"""

from __future__ import annotations

import base64
import json
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import IO, Final

from fraudstream_detector.session import pyspark_jars
from fraudstream_localstack.layout import EVALUATOR_TESTS_JAR
from fraudstream_rules.transactions import Transaction

from .oracle import Record, RuleRecord

HARNESS: Final = "io.fraudstream.evaluator.core.Harness"


class JvmHarnessError(RuntimeError):
    """The harness could not be started, or answered with an error."""


@dataclass(frozen=True)
class JvmOutcome:
    """One transaction's outcome from the JVM engine; `alerts` are the alert JSON objects in order, `late` pairs of
    group key and DLQ detail, `skipped` pairs of rule id and reason, `rejection` (error, detail) or None."""

    alerts: tuple[dict[str, object], ...]
    late: tuple[tuple[str, str], ...] = ()
    skipped: tuple[tuple[str, str], ...] = ()
    applied: tuple[str, ...] = ()
    out_of_order: bool = False
    rejection: tuple[str, str] | None = None

    @staticmethod
    def of(outcome: dict[str, object]) -> JvmOutcome:
        """From the harness's JSON outcome."""
        rejection = outcome["rejection"]
        assert rejection is None or isinstance(rejection, dict)
        return JvmOutcome(
            alerts=tuple(outcome["alerts"]),  # type: ignore[arg-type]
            late=tuple(tuple(pair) for pair in outcome["late"]),  # type: ignore[attr-defined]
            skipped=tuple(tuple(pair) for pair in outcome["skipped"]),  # type: ignore[attr-defined]
            applied=tuple(outcome["applied"]),  # type: ignore[arg-type]
            out_of_order=bool(outcome["outOfOrder"]),
            rejection=None if rejection is None else (str(rejection["error"]), str(rejection["detail"])),
        )


@dataclass(frozen=True)
class CallPlan:
    """How a scenario's records fall into calls of the detector's state shell (BucketProcessor, one bucket): a call
    ends after each record index in `ends` (and after the last record); the call that begins at a record index in
    `moves` runs in another JVM, whose cache does not hold the bucket's current state. `cache_bytes` is the cache's
    budget (1: nothing but the current call's groups stays cached; 0: the detector's default). The shell never
    sweeps idle groups here (BucketCalls.java says why)."""

    ends: frozenset[int]
    moves: frozenset[int]
    cache_bytes: int

    def request(self) -> dict[str, object]:
        """The plan in the harness request's terms."""
        return {
            "ends": sorted(self.ends),
            "moves": sorted(self.moves),
            "cacheBytes": self.cache_bytes,
        }


def record_json(record: Record) -> dict[str, object]:
    """The harness request form of one oracle record."""
    if isinstance(record, RuleRecord):
        value = None if record.rule is None else record.rule.to_message_value().decode()
        return {"kind": "rule", "ruleId": record.rule_id, "value": value, "ts": record.published_ts_ms}
    assert isinstance(record, Transaction)
    return raw_transaction_json(record.raw, record.ingest_ts_ms, record.partition, record.offset)


def raw_transaction_json(value: bytes | None, ingest_ts_ms: int, partition: int, offset: int) -> dict[str, object]:
    """The harness request form of a transactions-topic record holding any bytes (None: a null value)."""
    encoded = None if value is None else base64.b64encode(value).decode()
    return {"kind": "tx", "valueBase64": encoded, "ts": ingest_ts_ms, "partition": partition, "offset": offset}


def java_reporter(partition: int, offset: int, buckets: int) -> int:
    """Routes.reporterOf in Java's int arithmetic: floorMod(31 * partition + Long.hashCode(offset), buckets)."""

    def int32(value: int) -> int:
        value &= 0xFFFFFFFF
        return value - (1 << 32) if value >= 1 << 31 else value

    return int32(31 * partition + int32(offset ^ (offset >> 32))) % buckets


class JvmEngine:
    """One harness process; `run` evaluates a scenario from a fresh Engine."""

    def __init__(self, jar: Path) -> None:
        self._process = subprocess.Popen(
            ["java", "-Xss8m", "-cp", f"{jar}:{EVALUATOR_TESTS_JAR}:{pyspark_jars()}/*", HARNESS],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            encoding="utf-8",
        )

    def _pipes(self) -> tuple[IO[str], IO[str]]:
        stdin, stdout = self._process.stdin, self._process.stdout
        assert stdin is not None and stdout is not None
        return stdin, stdout

    def call(self, request_text: str) -> dict[str, object]:
        """Send one request line (JSON text); the response as parsed JSON (non-integers as Decimal)."""
        stdin, stdout = self._pipes()
        stdin.write(request_text + "\n")
        stdin.flush()
        line = stdout.readline()
        if not line:
            raise JvmHarnessError(f"the harness exited with {self._process.wait()}")
        response: dict[str, object] = json.loads(line, parse_float=Decimal)
        if response["error"] is not None:
            raise JvmHarnessError(f"the harness failed:\n{response['error']}")
        return response

    def request(self, request: dict[str, object]) -> list[dict[str, object]]:
        """Send one scenario request; the outcomes as parsed JSON (non-integers as Decimal)."""
        outcomes: list[dict[str, object]] = self.call(json.dumps(request, ensure_ascii=False))["outcomes"]  # type: ignore[assignment]
        return outcomes

    def run(
        self,
        records: Sequence[Record] | Sequence[dict[str, object]],
        lateness_ms: int,
        *,
        future_skew_ms: int = 300_000,
        bucket: int | None = None,
        buckets: int | None = None,
        persist_every_record: bool = False,
        page_out: str | None = None,
        routed: bool = False,
        calls: CallPlan | None = None,
    ) -> list[JvmOutcome]:
        """One JvmOutcome per transaction record, in order; records are oracle records or harness request forms.
        `page_out` ("everything" or "cold") keeps each group's window in memory, written as state rows after every
        change and then paged out, so that what a later record needs is read back from the rows; "resumed" keeps
        each group only as rows and a snapshot, resumed from the snapshot at every read (Harness.java). `routed`:
        `bucket` receives only the transactions the detector's router sends it (Routes.java), the others' outcomes
        are empty.
        `calls` evaluates the records in calls of the detector's state shell (BucketCalls.java), as the plan says."""
        outcomes = self.request(
            {
                "latenessMs": lateness_ms,
                "futureSkewMs": future_skew_ms,
                "records": [record if isinstance(record, dict) else record_json(record) for record in records],
                "bucket": bucket,
                "buckets": buckets,
                "persistEveryRecord": persist_every_record,
                "pageOut": page_out,
                "routed": routed,
                "calls": None if calls is None else calls.request(),
            }
        )
        return [JvmOutcome.of(outcome) for outcome in outcomes]

    def close(self) -> None:
        stdin, _ = self._pipes()
        stdin.close()
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
