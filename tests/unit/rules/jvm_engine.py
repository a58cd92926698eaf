"""A client for the JVM evaluator's test harness (`io.fraudstream.evaluator.core.Harness`).

The harness runs whole scenarios through the Java port of the evaluation core: one JSON request line per scenario
on its stdin, one JSON response line back. `JvmEngine` keeps one harness process for the test session and turns
the oracle's records into requests and the responses into `JvmOutcome`s (alerts as parsed JSON, numbers exact).
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import IO, Final

from fraudstream_rules.transactions import Transaction

from .oracle import Record, RuleRecord

REPO: Final = Path(__file__).resolve().parents[3]
JAR: Final = REPO / ".cache" / "evaluator" / "fraudstream-evaluator.jar"
PYSPARK_JARS: Final = REPO / ".venv" / "lib" / "python3.11" / "site-packages" / "pyspark" / "jars"
HARNESS: Final = "io.fraudstream.evaluator.core.Harness"


class JvmHarnessError(RuntimeError):
    """The harness could not be built or started, or answered with an error."""


@dataclass(frozen=True)
class JvmOutcome:
    """One transaction's outcome from the JVM engine; `alerts` are the alert JSON objects in order."""

    alerts: tuple[dict[str, object], ...]
    late_groups: tuple[str, ...]
    invalid_reason: str | None


def build_jar() -> Path:
    """Run `scripts/provision.sh evaluator` (idempotent, fast when stamped) and return the jar; raise if it fails."""
    result = subprocess.run(
        ["scripts/provision.sh", "evaluator"], cwd=REPO, capture_output=True, text=True, timeout=600, check=False
    )
    if result.returncode != 0 or not JAR.is_file():
        raise JvmHarnessError(
            f"scripts/provision.sh evaluator failed (exit {result.returncode}):\n{result.stdout}\n{result.stderr}"
        )
    return JAR


def record_json(record: Record) -> dict[str, object]:
    """The harness request form of one oracle record."""
    if isinstance(record, RuleRecord):
        value = None if record.rule is None else record.rule.to_message_value().decode()
        return {"kind": "rule", "ruleId": record.rule_id, "value": value, "ts": record.published_ts_ms}
    assert isinstance(record, Transaction)
    return {
        "kind": "tx",
        "value": record.raw.decode(),
        "ts": record.ingest_ts_ms,
        "partition": record.partition,
        "offset": record.offset,
    }


class JvmEngine:
    """One harness process; `run` evaluates a scenario from a fresh Engine."""

    def __init__(self, jar: Path) -> None:
        self._process = subprocess.Popen(
            ["java", "-Xss8m", "-cp", f"{jar}:{PYSPARK_JARS}/*", HARNESS],
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
        records: Sequence[Record],
        lateness_ms: int,
        *,
        bucket: int | None = None,
        buckets: int | None = None,
        persist_every_record: bool = False,
    ) -> list[JvmOutcome]:
        """One JvmOutcome per transaction record, in order."""
        outcomes = self.request(
            {
                "latenessMs": lateness_ms,
                "records": [record_json(record) for record in records],
                "bucket": bucket,
                "buckets": buckets,
                "persistEveryRecord": persist_every_record,
            }
        )
        return [
            JvmOutcome(
                alerts=tuple(outcome["alerts"]),  # type: ignore[arg-type]
                late_groups=tuple(outcome["lateGroups"]),  # type: ignore[arg-type]
                invalid_reason=outcome["invalidReason"],  # type: ignore[arg-type]
            )
            for outcome in outcomes
        ]

    def close(self) -> None:
        stdin, _ = self._pipes()
        stdin.close()
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
