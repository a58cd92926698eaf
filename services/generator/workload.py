"""What the generator produces, as a pure function of a seeded RNG: no Kafka, no clock.

Two profiles (`Profile`):
- `default` (`Workload`): payers and beneficiaries follow a Zipf law (a few very active accounts, a long tail);
  amounts are log-normal with two decimals; a configurable share of transactions starts an injected fraud pattern,
  a short burst of large payments from a taken-over account to a mule that trips the "payer+beneficiary sum over
  24 h above 200 000" example rule (and the benchmark's burst rules), so alerts arrive at a known rate.
- `flink-demo` (`FlinkDemoWorkload`): the transaction shape of the Flink fraud-detection demo, which its six rules
  (bench/rules.py) are written for: integer `payeeId` and `beneficiaryId` drawn uniformly from 1..N, amounts
  exponential, CSH or CRD with equal odds, no injected fraud.
"""

from __future__ import annotations

import bisect
import itertools
import math
import random
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, Decimal
from enum import StrEnum
from typing import Protocol

PAYMENT_TYPES = ("CSH", "CRD")
CENT = Decimal("0.01")
FRAUD_BURST_AMOUNTS = (Decimal("90000.00"), Decimal("70000.00"), Decimal("60000.00"))


class Profile(StrEnum):
    """A workload and the benchmark rules written for it (bench/rules.py uses the same names)."""

    DEFAULT = "default"
    FLINK_DEMO = "flink-demo"


@dataclass(frozen=True)
class WorkloadConfig:
    """The default profile's shape."""

    payers: int = 100_000
    beneficiaries: int = 20_000
    zipf_s: float = 1.1
    amount_median: Decimal = Decimal("120.00")
    amount_sigma: float = 1.2
    cash_share: float = 0.3
    fraud_share: float = 0.001
    disorder_ms: int = 0


class ZipfSampler:
    """Samples ranks 0..n-1 with P(k) proportional to 1/(k+1)^s, in O(log n) per draw."""

    def __init__(self, n: int, s: float) -> None:
        weights = (1.0 / math.pow(k + 1, s) for k in range(n))
        self._cumulative = list(itertools.accumulate(weights))

    def draw(self, rng: random.Random) -> int:
        return bisect.bisect_left(self._cumulative, rng.random() * self._cumulative[-1])


@dataclass(frozen=True)
class GeneratedTransaction:
    """One transaction: its Kafka record key (the payer; the payee in the flink-demo profile), its JSON body
    (CONTRACT section 3) and whether it belongs to an injected fraud burst."""

    key: str
    body: dict[str, object]
    fraud: bool


class TransactionSource(Protocol):
    """What the generator's send loop draws from: one transaction per call, for wall-clock `now_ms`."""

    def next(self, now_ms: int) -> GeneratedTransaction: ...


def _event_time_ms(rng: random.Random, now_ms: int, disorder_ms: int) -> int:
    """`now_ms`, or up to `disorder_ms` earlier (uniformly) when disorder is configured."""
    return now_ms - (rng.randrange(disorder_ms + 1) if disorder_ms else 0)


class Workload:
    """An endless, reproducible stream of Transaction JSON bodies (CONTRACT section 3)."""

    def __init__(self, config: WorkloadConfig, seed: int = 1) -> None:
        self.config = config
        self._rng = random.Random(seed)
        self._payers = ZipfSampler(config.payers, config.zipf_s)
        self._beneficiaries = ZipfSampler(config.beneficiaries, config.zipf_s)
        self._pending_fraud: list[tuple[str, str, Decimal]] = []
        self._seq = itertools.count()
        self._mu = math.log(float(config.amount_median))

    def _amount(self) -> Decimal:
        return Decimal(round(self._rng.lognormvariate(self._mu, self.config.amount_sigma), 2)).quantize(CENT)

    def next(self, now_ms: int) -> GeneratedTransaction:
        """The next transaction at wall-clock `now_ms`; eventTime lags by up to `disorder_ms` when configured."""
        cfg, rng = self.config, self._rng
        fraud = False
        if self._pending_fraud:
            payer, beneficiary, amount = self._pending_fraud.pop()
            fraud = True
        else:
            payer = f"payer-{self._payers.draw(rng)}"
            beneficiary = f"beneficiary-{self._beneficiaries.draw(rng)}"
            amount = self._amount()
            if rng.random() < cfg.fraud_share:
                # A fresh pair (a taken-over account paying a mule), so the burst alone crosses the limits.
                n = next(self._seq)
                payer, beneficiary = f"taken-over-{n}", f"mule-{n}"
                self._pending_fraud = [(payer, beneficiary, a) for a in reversed(FRAUD_BURST_AMOUNTS)]
                payer, beneficiary, amount = self._pending_fraud.pop()
                fraud = True
        body: dict[str, object] = {
            "transactionId": f"tx-{next(self._seq)}",
            "eventTime": _event_time_ms(rng, now_ms, cfg.disorder_ms),
            "payerId": payer,
            "beneficiaryId": beneficiary,
            "paymentAmount": str(amount),
            "paymentType": PAYMENT_TYPES[0] if rng.random() < cfg.cash_share else PAYMENT_TYPES[1],
        }
        return GeneratedTransaction(payer, body, fraud)

    def stream(self, start_ms: int, step_ms: int) -> Iterator[GeneratedTransaction]:
        for i in itertools.count():
            yield self.next(start_ms + i * step_ms)


@dataclass(frozen=True)
class FlinkDemoConfig:
    """The flink-demo profile's shape: ids uniform in 1..payees and 1..beneficiaries, amounts exponential with mean
    `amount_mean`, clamped to [amount_floor, amount_cap] and rounded half-even to cents."""

    payees: int = 100_000
    beneficiaries: int = 100_000
    amount_mean: Decimal = Decimal("100")
    amount_floor: Decimal = Decimal("0.01")
    amount_cap: Decimal = Decimal("5000.00")
    disorder_ms: int = 0


class FlinkDemoWorkload:
    """An endless, reproducible stream in the Flink fraud-detection demo's shape: `transactionId` (int), `eventTime`,
    `payeeId` and `beneficiaryId` (ints), `paymentAmount` (decimal string, two decimals), `paymentType`. Keyed by
    payeeId. No fraud is injected: the demo's rules fire on the random traffic itself."""

    def __init__(self, config: FlinkDemoConfig, seed: int = 1) -> None:
        self.config = config
        self._rng = random.Random(seed)
        self._seq = itertools.count(1)

    def _amount(self) -> Decimal:
        cfg = self.config
        drawn = Decimal(self._rng.expovariate(1 / float(cfg.amount_mean))).quantize(CENT, ROUND_HALF_EVEN)
        return min(max(drawn, cfg.amount_floor), cfg.amount_cap)

    def next(self, now_ms: int) -> GeneratedTransaction:
        """The next transaction at wall-clock `now_ms`; eventTime lags by up to `disorder_ms` when configured."""
        cfg, rng = self.config, self._rng
        payee = rng.randint(1, cfg.payees)
        body: dict[str, object] = {
            "transactionId": next(self._seq),
            "eventTime": _event_time_ms(rng, now_ms, cfg.disorder_ms),
            "payeeId": payee,
            "beneficiaryId": rng.randint(1, cfg.beneficiaries),
            "paymentAmount": str(self._amount()),
            "paymentType": rng.choice(PAYMENT_TYPES),
        }
        return GeneratedTransaction(str(payee), body, False)
