"""What the generator produces, as a pure function of a seeded RNG: no Kafka, no clock.

Payers and beneficiaries follow a Zipf law (a few very active accounts, a long tail); amounts are log-normal
with two decimals; a configurable share of transactions starts an injected fraud pattern, a short burst of
large payments from a taken-over account to a mule that trips the "payer+beneficiary sum over 24 h above
200 000" example rule (and the benchmark's burst rules), so alerts arrive at a known rate.
"""

from __future__ import annotations

import bisect
import itertools
import math
import random
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal

PAYMENT_TYPES = ("CSH", "CRD")
FRAUD_BURST_AMOUNTS = (Decimal("90000.00"), Decimal("70000.00"), Decimal("60000.00"))


@dataclass(frozen=True)
class WorkloadConfig:
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
    payer_id: str
    body: dict[str, object]
    fraud: bool


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
        return Decimal(round(self._rng.lognormvariate(self._mu, self.config.amount_sigma), 2)).quantize(Decimal("0.01"))

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
        lag_ms = rng.randrange(cfg.disorder_ms + 1) if cfg.disorder_ms else 0
        body: dict[str, object] = {
            "transactionId": f"tx-{next(self._seq)}",
            "eventTime": now_ms - lag_ms,
            "payerId": payer,
            "beneficiaryId": beneficiary,
            "paymentAmount": str(amount),
            "paymentType": PAYMENT_TYPES[0] if rng.random() < cfg.cash_share else PAYMENT_TYPES[1],
        }
        return GeneratedTransaction(payer, body, fraud)

    def stream(self, start_ms: int, step_ms: int) -> Iterator[GeneratedTransaction]:
        for i in itertools.count():
            yield self.next(start_ms + i * step_ms)
