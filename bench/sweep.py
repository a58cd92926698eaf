"""`python -m bench.sweep`: the highest transaction rate that still holds the latency budget.

Runs `bench.run` at rising rates (each a fresh stack, the same rules, payers and durations) until a rate misses
p99 <= 500 ms or falls short of its target rate by more than 2%, and writes every step and the verdict to
bench/results/sweep.json (each step's own JSON and plot beside it as sweep-<rate>.json/.png). The default ladder goes
past issue 12's target of 4 000 tx/s, so that a machine that holds it can show it; `--rates` sets another.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import sys
import traceback
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from bench import run
from bench.latency import BUDGET_HIGH_MS
from fraudstream_localstack.processes import StopSignals

SHORTFALL = 0.02
DEFAULT_RATES = "1000,1500,2000,3000,4000,5000,6000,8000"
# What each step of the verdict keeps: the halves tell a step that failed at its cold start (first half only) from
# one that could not keep the rate at all; `code` (bench/provenance.py) what each step measured, since every step
# starts its own detector, and the checkout's evaluator jar is rebuilt before it when services/evaluator changed.
STEP_FIELDS = (
    "rate_tps", "achieved_tps", "p50_ms", "p99_ms", "max_ms", "first_half_p99_ms", "second_half_p99_ms", "code",
    "error",
)  # fmt: skip


def holds(step: Mapping[str, Any]) -> bool:
    """Whether a step kept its rate (within 2%) and its end-to-end p99 within 500 ms."""
    return (
        float(step["achieved_tps"]) >= float(step["rate_tps"]) * (1 - SHORTFALL)
        and float(step["p99_ms"]) <= BUDGET_HIGH_MS
    )


def ascending_rates(text: str) -> list[float]:
    """The comma-separated tx/s of `text`; argparse.ArgumentTypeError unless each is above the one before."""
    rates = [float(r) for r in text.split(",")]
    if any(later <= earlier for earlier, later in itertools.pairwise(rates)):
        raise argparse.ArgumentTypeError(f"rates must ascend: {text}")
    return rates


def failed_step(rate: float, error: str) -> dict[str, Any]:
    """The step of a rate whose run could not be measured (`error` says why): it does not hold."""
    return {"rate_tps": rate, "achieved_tps": 0.0, "p99_ms": math.nan, "error": error}


def climb(rates: Iterable[float], measure: Callable[[float], Mapping[str, Any]]) -> dict[str, Any]:
    """Measures each of the ascending `rates` in turn, stopping after the first that does not hold; the verdict names
    the highest rate that held (None if none did) and the one that failed (None if every rate held)."""
    steps: list[Mapping[str, Any]] = []
    for rate in rates:
        steps.append(measure(rate))
        if not holds(steps[-1]):
            break
    held = [s for s in steps if holds(s)]
    return {
        "highest_sustained_tps": held[-1]["rate_tps"] if held else None,
        "first_failing_tps": steps[-1]["rate_tps"] if steps and not holds(steps[-1]) else None,
        "steps": [{k: s.get(k) for k in STEP_FIELDS} for s in steps],
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="bench.sweep", description=__doc__)
    p.add_argument("--rates", type=ascending_rates, default=DEFAULT_RATES, help="comma-separated tx/s, ascending")
    p.add_argument("--duration-s", type=float, default=90.0)
    p.add_argument("--warmup-s", type=float, default=30.0)
    p.add_argument("--rules", type=int, default=50)
    p.add_argument("--payers", type=int, default=100_000)
    p.add_argument("--results", type=Path, default=run.RESULTS)
    args = p.parse_args(argv)

    def measure(rate: float) -> dict[str, Any]:
        output = args.results / f"sweep-{rate:.0f}.json"
        output.unlink(missing_ok=True)  # an earlier sweep's result must not stand in for this run's
        try:
            run.main(
                ["--rate", str(rate), "--duration-s", str(args.duration_s), "--warmup-s", str(args.warmup_s),
                 "--rules", str(args.rules), "--payers", str(args.payers), "--label", f"sweep {rate:.0f} tx/s",
                 "--output", str(output)]
            )  # fmt: skip
            result: dict[str, Any] = json.loads(output.read_text())
        except Exception as exc:  # a step that cannot run fails, and the steps before it are still reported
            traceback.print_exc()
            return failed_step(rate, f"{type(exc).__name__}: {exc}")
        return result

    verdict = climb(args.rates, measure)
    (args.results / "sweep.json").write_text(json.dumps(verdict, indent=2) + "\n")
    print(json.dumps(verdict, indent=2))
    return 0


if __name__ == "__main__":
    StopSignals()  # SIGTERM too unwinds through main's cleanup, which stops everything the run started
    sys.exit(main())
