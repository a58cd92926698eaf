"""`python -m fraudstream_generator --rate 1000 --payers 100000`: produce transactions at a steady rate.

`--profile flink-demo` produces the Flink fraud-detection demo's transaction shape instead (workload.Profile), keyed by
payeeId.

The rate is held against the start time in 5 ms ticks, so scheduling hiccups do not accumulate. Records go out
through an idempotent producer keyed by payerId; the CreateTime timestamp is the moment of sending (the
contract's ingestion time). Prometheus metrics on --metrics-port (0 = none).

Credentials a broker refuses end it at start, with one line on stderr naming the listener and the mechanism and
exit status EXIT_CONFIG; an unreachable broker is not waited for here (the producer buffers until it answers).
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
import time
from decimal import Decimal

from confluent_kafka import KafkaError, Message, Producer
from prometheus_client import Counter, Gauge, start_http_server

from fraudstream_kafka.exceptions import CredentialsRefusedError
from fraudstream_kafka.security import check_credentials
from fraudstream_kafka.settings import RELIABLE_PRODUCER, KafkaSettings, Topics

from .workload import FlinkDemoConfig, FlinkDemoWorkload, Profile, TransactionSource, Workload, WorkloadConfig

SENT = Counter("fraud_generator_transactions", "Transactions handed to the producer", ["kind"])
FAILED = Counter("fraud_generator_delivery_failures", "Transactions the broker did not acknowledge")
TARGET_RATE = Gauge("fraud_generator_target_rate_tps", "Configured rate")

TICK_S = 0.005
EXIT_CONFIG = 78  # EX_CONFIG: the configuration is wrong, restarting unchanged cannot help


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="fraudstream_generator", description=__doc__)
    p.add_argument("--rate", type=float, default=20.0, help="transactions per second")
    p.add_argument(
        "--profile",
        type=Profile,
        choices=list(Profile),
        default=Profile.DEFAULT,
        help="default: Zipf accounts, log-normal amounts, fraud bursts; flink-demo: the Flink demo's uniform integer "
        "payeeId/beneficiaryId (1..--payers, 1..--beneficiaries) and exponential amounts (mean 100), no bursts",
    )
    p.add_argument("--duration-s", type=float, default=0.0, help="0 = until stopped")
    p.add_argument("--payers", type=int, default=100_000, help="distinct payers (flink-demo: payees)")
    p.add_argument(
        "--beneficiaries", type=int, default=None, help="distinct beneficiaries (default 20000; flink-demo 100000)"
    )
    p.add_argument("--zipf-s", type=float, default=1.1, help="Zipf exponent of account activity (default profile)")
    p.add_argument("--amount-median", type=Decimal, default=Decimal("120.00"), help="default profile only")
    p.add_argument(
        "--fraud-share",
        type=float,
        default=0.001,
        help="share of transactions starting a fraud burst (default profile)",
    )
    p.add_argument("--disorder-ms", type=int, default=0, help="eventTime lags send time by up to this")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--metrics-port", type=int, default=0)
    p.add_argument("--metrics-addr", default="0.0.0.0", help="address the metrics server binds to")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    if args.metrics_port:
        start_http_server(args.metrics_port, addr=args.metrics_addr)
    TARGET_RATE.set(args.rate)
    workload = build_workload(args)
    topic = Topics.from_env().transactions
    kafka = KafkaSettings.from_env()
    try:
        check_credentials(kafka, timeout_s=10, who="the generator")
    except CredentialsRefusedError as exc:
        print(f"fraudstream_generator: {exc}", file=sys.stderr, flush=True)
        return EXIT_CONFIG
    producer = Producer(kafka.client_config(**RELIABLE_PRODUCER, **{"linger.ms": 2}))

    def delivered(err: KafkaError | None, _msg: Message) -> None:
        if err is not None:
            FAILED.inc()

    start = time.monotonic()
    sent = 0
    while not stop.is_set():
        elapsed = time.monotonic() - start
        if args.duration_s and elapsed >= args.duration_s:
            break
        due = int(elapsed * args.rate) - sent
        now_ms = int(time.time() * 1000)
        for _ in range(due):
            tx = workload.next(now_ms)
            producer.produce(topic, key=tx.key, value=json.dumps(tx.body), on_delivery=delivered)
            SENT.labels(kind="fraud" if tx.fraud else "normal").inc()
        sent += max(due, 0)
        producer.poll(0)
        stop.wait(TICK_S)
    producer.flush(30)
    print(json.dumps({"sent": sent, "elapsed_s": round(time.monotonic() - start, 3)}), flush=True)
    return 0


def build_workload(args: argparse.Namespace) -> TransactionSource:
    """The profile's workload, configured from the parsed flags."""
    if args.profile is Profile.FLINK_DEMO:
        beneficiaries = args.beneficiaries or FlinkDemoConfig.beneficiaries
        config = FlinkDemoConfig(payees=args.payers, beneficiaries=beneficiaries, disorder_ms=args.disorder_ms)
        return FlinkDemoWorkload(config, seed=args.seed)
    return Workload(
        WorkloadConfig(
            payers=args.payers,
            beneficiaries=args.beneficiaries or WorkloadConfig.beneficiaries,
            zipf_s=args.zipf_s,
            amount_median=args.amount_median,
            fraud_share=args.fraud_share,
            disorder_ms=args.disorder_ms,
        ),
        seed=args.seed,
    )


if __name__ == "__main__":
    sys.exit(main())
