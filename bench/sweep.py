"""`python -m bench.sweep`: the highest transaction rate that still holds the latency budget.

Runs `bench.run` at rising rates (each a fresh stack, the same rules, payers and durations) until a rate misses
p99 <= 500 ms or falls short of its target rate by more than 2%, and writes every step and the verdict to
bench/results/sweep.json (each step's own JSON and plot beside it as sweep-<rate>.json/.png).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from bench import run

SHORTFALL = 0.02


def holds(step: Mapping[str, Any]) -> bool:
    """Whether a step kept its rate (within 2%) and its end-to-end p99 within 500 ms."""
    return float(step["achieved_tps"]) >= float(step["rate_tps"]) * (1 - SHORTFALL) and float(step["p99_ms"]) <= 500


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="bench.sweep", description=__doc__)
    p.add_argument("--rates", default="1000,1250,1500,1750,2000", help="comma-separated tx/s, ascending")
    p.add_argument("--duration-s", type=float, default=90.0)
    p.add_argument("--warmup-s", type=float, default=30.0)
    p.add_argument("--rules", type=int, default=50)
    p.add_argument("--payers", type=int, default=100_000)
    p.add_argument("--results", type=Path, default=run.RESULTS)
    args = p.parse_args(argv)
    steps: list[dict[str, Any]] = []
    for rate in (float(r) for r in args.rates.split(",")):
        output = args.results / f"sweep-{rate:.0f}.json"
        run.main(
            ["--rate", str(rate), "--duration-s", str(args.duration_s), "--warmup-s", str(args.warmup_s),
             "--rules", str(args.rules), "--payers", str(args.payers), "--label", f"sweep {rate:.0f} tx/s",
             "--output", str(output)]
        )  # fmt: skip
        steps.append(json.loads(output.read_text()))
        if not holds(steps[-1]):
            break
    held = [s for s in steps if holds(s)]
    verdict = {
        "highest_sustained_tps": held[-1]["rate_tps"] if held else None,
        "first_failing_tps": steps[-1]["rate_tps"] if steps and not holds(steps[-1]) else None,
        "steps": [{k: s[k] for k in ("rate_tps", "achieved_tps", "p50_ms", "p99_ms", "max_ms")} for s in steps],
    }
    (args.results / "sweep.json").write_text(json.dumps(verdict, indent=2) + "\n")
    print(json.dumps(verdict, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
