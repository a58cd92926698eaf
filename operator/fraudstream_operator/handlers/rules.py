"""FraudRule handlers: publish each generation to the rules topic, tombstone on delete.

Ready=True is written only after the broker acknowledged the generation's record; every failure goes through
`_failure`, which writes Ready=False and turns the error into kopf's retry policy.
"""

from __future__ import annotations

from typing import Any

import kopf

from .. import conditions, events
from ..conditions import Publication
from ..exceptions import InvalidSpecError, OperatorError, PublishRejectedError
from ..messages import rule_message
from ..metrics import RECONCILE_ERRORS
from ..publishing import publish, retire_other_object, tombstone
from ..resource import GROUP, PLURAL, VERSION, rule_key
from ..runtime import Runtime, runtime_of
from ..status import write_status


def _failure(
    runtime: Runtime,
    body: kopf.Body,
    patch: kopf.Patch,
    error: OperatorError,
    retry: int,
    logger: kopf.Logger,
) -> Exception:
    """Records the failure (status, event, metric) and returns the kopf error that carries its retry policy."""
    write_status(patch.status, body.status, int(body.meta["generation"]), conditions.not_ready(error))
    events.failed(body, error)
    RECONCILE_ERRORS.labels(error.reason).inc()
    logger.warning(f"{error.reason}: {error}")
    if error.permanent:
        return kopf.PermanentError(f"{error.reason}: {error}")
    return kopf.TemporaryError(f"{error.reason}: {error}", delay=runtime.settings.retry_delay_s(retry))


def _retire_other_object(
    runtime: Runtime, body: kopf.Body, patch: kopf.Patch, key: str, uid: str, retry: int, logger: kopf.Logger
) -> None:
    """For a rule that cannot be published (its spec invalid, or its record refused): the key's rule, if it may be
    another (deleted) object's and cannot be this one's, is tombstoned first; a failed tombstone is reported and
    retried like a failed publish."""
    try:
        retired = retire_other_object(runtime.publisher, runtime.topic, key, uid)
    except OperatorError as error:
        raise _failure(runtime, body, patch, error, retry, logger) from error
    if retired:
        because = "the key's rule was that of a deleted FraudRule of the same name, and this one's cannot be published"
        events.tombstoned(body, runtime.settings.rules_topic, because)
        logger.info(f"tombstone written for {key}: {because}")


@kopf.on.resume(GROUP, VERSION, PLURAL)
@kopf.on.create(GROUP, VERSION, PLURAL)
@kopf.on.update(GROUP, VERSION, PLURAL, field="spec")
def publish_rule(
    body: kopf.Body,
    spec: kopf.Spec,
    patch: kopf.Patch,
    retry: int,
    memo: kopf.Memo,
    logger: kopf.Logger,
    **_: Any,
) -> None:
    runtime = runtime_of(memo)
    key = rule_key(str(body.meta["namespace"]), str(body.meta["name"]))
    generation = int(body.meta["generation"])
    uid = str(body.meta["uid"])
    runtime.managed.add(key)
    try:
        value = rule_message(key, generation, uid, spec)
        record, sent = publish(runtime.publisher, runtime.topic, key, value)
    except (InvalidSpecError, PublishRejectedError) as refused:
        _retire_other_object(runtime, body, patch, key, uid, retry, logger)
        raise _failure(runtime, body, patch, refused, retry, logger) from refused
    except OperatorError as error:
        raise _failure(runtime, body, patch, error, retry, logger) from error
    publication = Publication(generation, runtime.settings.rules_topic, record.partition, record.offset)
    write_status(patch.status, body.status, generation, conditions.ready(publication), publication)
    if sent:
        events.published(body, publication)
        logger.info(f"generation {generation} published at offset {record.offset}")


@kopf.on.delete(GROUP, VERSION, PLURAL)
def tombstone_rule(
    body: kopf.Body, patch: kopf.Patch, retry: int, memo: kopf.Memo, logger: kopf.Logger, **_: Any
) -> None:
    runtime = runtime_of(memo)
    key = rule_key(str(body.meta["namespace"]), str(body.meta["name"]))
    try:
        sent = tombstone(runtime.publisher, runtime.topic, key)
    except OperatorError as error:
        raise _failure(runtime, body, patch, error, retry, logger) from error
    runtime.managed.discard(key)
    if sent:
        events.tombstoned(body, runtime.settings.rules_topic)
        logger.info(f"tombstone written for {key}")
