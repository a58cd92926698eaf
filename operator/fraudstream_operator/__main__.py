"""`python -m fraudstream_operator`: the operator, configured from the environment (see settings.py).

With leader election on (the default) the process is one replica among any number: it serves its metrics from
the start, waits as a standby until it holds the Lease, and only then runs kopf (see leadership.py). With
OPERATOR_LEADER_ELECTION=false it runs kopf at once and must be the only operator of its rules topic.

Before anything else it asks a broker whether it accepts the operator's Kafka credentials: refused credentials end
the process at once with one log line naming the listener and the mechanism (exit status EXIT_CONFIG), since no
retry can fix them; a broker that does not answer is waited for later, by the startup reconciliation.
"""

from __future__ import annotations

import logging

import kopf

from fraudstream_kafka.exceptions import CredentialsRefusedError
from fraudstream_kafka.security import check_credentials

from . import handlers  # noqa: F401  (importing registers the handlers with kopf)
from .handlers.lifecycle import METRICS_KEY
from .leadership import run_elected
from .metrics import MetricsServer
from .settings import OperatorSettings

logger = logging.getLogger("fraudstream_operator")
EXIT_CONFIG = 78  # EX_CONFIG: the configuration is wrong, restarting unchanged cannot help
CREDENTIALS_CHECK_S = 10.0


def _run_operator(settings: OperatorSettings, memo: kopf.Memo) -> None:
    kopf.run(
        standalone=True,
        clusterwide=settings.clusterwide,
        namespaces=settings.namespaces,
        liveness_endpoint=settings.liveness_endpoint or None,
        memo=memo,
    )


def _exit_if_credentials_refused(settings: OperatorSettings) -> None:
    """Ends the process (EXIT_CONFIG, one log line) when a broker refuses the operator's Kafka credentials; returns
    when one accepted them, or when none answered within CREDENTIALS_CHECK_S (the reconciliation waits for it)."""
    try:
        check_credentials(settings.kafka, timeout_s=CREDENTIALS_CHECK_S, who="the operator")
    except CredentialsRefusedError as exc:
        logger.error(f"{exc}")
        raise SystemExit(EXIT_CONFIG) from None


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
        _exit_if_credentials_refused(settings)
        if settings.election.enabled:
            run_elected(settings, lambda: _run_operator(settings, memo))
        else:
            _run_operator(settings, memo)
    finally:
        if METRICS_KEY in memo:
            memo[METRICS_KEY].stop()


if __name__ == "__main__":
    main()
