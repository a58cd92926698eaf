"""Operator-wide handlers: configuration, startup reconciliation of the topic, liveness, cleanup."""

from __future__ import annotations

from typing import Any

import kopf

from ..diffbase import DigestDiffBaseStorage
from ..exceptions import OperatorError
from ..metrics import LEADER, RECONCILE_ERRORS, MetricsServer
from ..reconcile import start_runtime
from ..runtime import MEMO_KEY, runtime_of
from ..settings import OperatorSettings

SETTINGS_KEY = "fraudstream_settings"
METRICS_KEY = "fraudstream_metrics_server"


@kopf.on.login()
def login(**kwargs: Any) -> kopf.ConnectionInfo | None:
    """In a pod: the service account. Elsewhere: $KUBECONFIG (or ~/.kube/config) as it is now.

    kopf's default login goes through the kubernetes client, which fixes $KUBECONFIG when first imported;
    reading it at login time lets one process run operators against different clusters (the tests do).
    """
    return kopf.login_with_service_account(**kwargs) or kopf.login_with_kubeconfig(**kwargs)


@kopf.on.startup()
def configure(settings: kopf.OperatorSettings, memo: kopf.Memo, logger: kopf.Logger, **_: Any) -> None:
    """Reads the environment, tunes kopf, starts the metrics server unless the process serves them already
    (`python -m fraudstream_operator` does, from before the election); a port already in use stops the operator.

    kopf keeps its diff base as digests (see diffbase.py), so a spec of any size the API server takes is handled.
    kopf runs standalone: it is started only in the replica that holds the Lease (see leadership.py), or in the
    only one when election is off, so kopf's own peering is not needed.
    """
    config = OperatorSettings.from_env()
    settings.peering.standalone = True
    # Without scanning kopf needs no RBAC on CRDs or namespaces; the startup listing proves the CRD is served.
    settings.scanning.disabled = True
    settings.persistence.progress_storage = kopf.AnnotationsProgressStorage()
    settings.persistence.diffbase_storage = DigestDiffBaseStorage()
    memo[SETTINGS_KEY] = config
    LEADER.set(1)
    if config.metrics_port and METRICS_KEY not in memo:
        try:
            memo[METRICS_KEY] = MetricsServer(config.metrics_addr, config.metrics_port)
        except OSError as exc:
            where = f"{config.metrics_addr}:{config.metrics_port}"
            raise kopf.PermanentError(f"cannot serve metrics on {where}: {exc}") from exc
    logger.info(f"rules topic {config.rules_topic}, namespaces {list(config.namespaces) or 'all'}")


@kopf.on.startup()
def reconcile_topic(memo: kopf.Memo, retry: int, logger: kopf.Logger, **_: Any) -> None:
    """Tombstones orphaned keys; the watch streams (and so the resume handlers) start only after this succeeds."""
    config: OperatorSettings = memo[SETTINGS_KEY]
    try:
        memo[MEMO_KEY] = start_runtime(config, logger)
    except OperatorError as error:
        RECONCILE_ERRORS.labels(error.reason).inc()
        raise kopf.TemporaryError(f"{error.reason}: {error}", delay=config.retry_delay_s(retry)) from error


@kopf.on.probe(id="rulesManaged")
async def rules_managed(memo: kopf.Memo, **_: Any) -> int:
    """Part of the liveness answer; async, so that probing never waits for a busy handler thread."""
    return len(runtime_of(memo).managed)


@kopf.on.cleanup()
async def shut_down(settings: kopf.OperatorSettings, memo: kopf.Memo, **_: Any) -> None:
    """Stops what the operator started, so that no thread outlives it: kopf's pool for sync handlers first
    (a publish still waiting for its delivery report ends within the publish timeout), then the producer."""
    settings.execution.executor.shutdown(wait=True)
    if MEMO_KEY in memo:
        runtime_of(memo).publisher.close()
    if METRICS_KEY in memo:
        memo[METRICS_KEY].stop()
