"""`python -m fraudstream_operator`: the operator, configured from the environment (see settings.py).

With leader election on (the default) the process is one replica among any number: it serves its metrics from
the start, waits as a standby until it holds the Lease, and only then runs kopf (see leadership.py). With
OPERATOR_LEADER_ELECTION=false it runs kopf at once and must be the only operator of its rules topic.
"""

from __future__ import annotations

import kopf

from . import handlers  # noqa: F401  (importing registers the handlers with kopf)
from .handlers.lifecycle import METRICS_KEY
from .leadership import run_elected
from .metrics import MetricsServer
from .settings import OperatorSettings


def _run_operator(settings: OperatorSettings, memo: kopf.Memo) -> None:
    kopf.run(
        standalone=True,
        clusterwide=settings.clusterwide,
        namespaces=settings.namespaces,
        liveness_endpoint=settings.liveness_endpoint or None,
        memo=memo,
    )


def main() -> None:
    settings = OperatorSettings.from_env()
    kopf.configure(log_prefix=True)
    # A standby is scraped like the leader (the OperatorDown alert watches every replica), so metrics come first.
    memo = kopf.Memo()
    if settings.metrics_port:
        try:
            memo[METRICS_KEY] = MetricsServer(settings.metrics_addr, settings.metrics_port)
        except OSError as exc:
            raise SystemExit(f"cannot serve metrics on {settings.metrics_addr}:{settings.metrics_port}: {exc}") from exc
    try:
        if settings.election.enabled:
            run_elected(settings, lambda: _run_operator(settings, memo))
        else:
            _run_operator(settings, memo)
    finally:
        if METRICS_KEY in memo:
            memo[METRICS_KEY].stop()


if __name__ == "__main__":
    main()
