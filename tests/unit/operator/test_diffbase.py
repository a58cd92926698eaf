"""The digest diff base: what kopf's change detection sees through it, and how little it stores."""

from __future__ import annotations

import json
from typing import Any, cast

import kopf
from kopf._cogs.structs.diffs import diff  # kopf's own diff, as its change detection computes it

from fraudstream_operator.diffbase import DigestDiffBaseStorage, stanza_digest

LEGACY_KEY = "kopf.zalando.org/last-handled-configuration"
DIGESTS_KEY = "kopf.zalando.org/last-handled-digests"
SPEC: dict[str, Any] = {"aggregatorFunctionType": "COUNT", "limit": "3", "windowMinutes": 5}


def fraud_rule(spec: dict[str, Any], annotations: dict[str, str] | None = None, **labels: str) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": "r", "namespace": "ns", "uid": "u-1", "generation": 4}
    metadata["annotations"] = dict(annotations or {})
    if labels:
        metadata["labels"] = dict(labels)
    return {"apiVersion": "fraudstream.io/v1alpha1", "kind": "FraudRule", "metadata": metadata, "spec": spec}


def body_of(raw: dict[str, Any]) -> kopf.Body:
    return kopf.Body(cast(kopf.RawBody, raw))


def handled(storage: DigestDiffBaseStorage, raw: dict[str, Any]) -> dict[str, Any]:
    """`raw` as the API server returns it once kopf stored its essence: the patch's annotations applied."""
    body = body_of(raw)
    patch = kopf.Patch()
    storage.store(body=body, patch=patch, essence=storage.build(body=body))
    annotations = {**raw["metadata"]["annotations"], **patch["metadata"]["annotations"]}
    return {**raw, "metadata": {**raw["metadata"], "annotations": {k: v for k, v in annotations.items() if v}}}


def diff_fields(storage: DigestDiffBaseStorage, raw: dict[str, Any]) -> set[tuple[str, ...]]:
    body = body_of(raw)
    old, new = storage.fetch(body=body), storage.build(body=body)
    return {tuple(op[1][:1]) for op in diff(old, new)}


def test_an_object_never_handled_has_no_diff_base_so_kopf_sees_a_create() -> None:
    assert DigestDiffBaseStorage().fetch(body=body_of(fraud_rule(SPEC))) is None


def test_an_unchanged_object_yields_its_own_essence_so_kopf_sees_no_change() -> None:
    storage = DigestDiffBaseStorage()
    raw = handled(storage, fraud_rule(SPEC, {"team": "fraud"}, tier="gold"))
    body = body_of(raw)
    assert storage.fetch(body=body) == storage.build(body=body)
    assert not diff(storage.fetch(body=body), storage.build(body=body))


def test_a_changed_spec_shows_as_a_spec_change_only() -> None:
    storage = DigestDiffBaseStorage()
    raw = handled(storage, fraud_rule(SPEC, tier="gold"))
    raw["spec"] = {**SPEC, "limit": "4"}
    assert diff_fields(storage, raw) == {("spec",)}


def test_a_changed_label_is_not_a_spec_change() -> None:
    storage = DigestDiffBaseStorage()
    raw = handled(storage, fraud_rule(SPEC, tier="gold"))
    raw["metadata"]["labels"] = {"tier": "silver"}
    assert diff_fields(storage, raw) == {("metadata",)}


def test_a_stanza_that_appears_or_disappears_is_a_change() -> None:
    storage = DigestDiffBaseStorage()
    labelled = handled(storage, fraud_rule(SPEC, tier="gold"))
    del labelled["metadata"]["labels"]
    assert diff_fields(storage, labelled) == {("metadata",)}
    plain = handled(storage, fraud_rule(SPEC))
    plain["metadata"]["labels"] = {"tier": "gold"}
    assert diff_fields(storage, plain) == {("metadata",)}


def test_key_order_is_not_a_change() -> None:
    storage = DigestDiffBaseStorage()
    raw = handled(storage, fraud_rule(SPEC))
    raw["spec"] = dict(reversed(list(SPEC.items())))
    assert diff_fields(storage, raw) == set()
    assert stanza_digest({"a": 1, "b": [1, 2]}) == stanza_digest({"b": [1, 2], "a": 1})
    assert stanza_digest([1, 2]) != stanza_digest([2, 1])


def test_what_is_stored_does_not_grow_with_the_spec() -> None:
    storage = DigestDiffBaseStorage()
    small = handled(storage, fraud_rule(SPEC))["metadata"]["annotations"]
    huge_spec = {**SPEC, "filters": [{"field": "payerId", "operator": "IN", "value": [f"p{i}" for i in range(50_000)]}]}
    huge = handled(storage, fraud_rule(huge_spec))["metadata"]["annotations"]
    assert set(huge) == {DIGESTS_KEY}
    assert len(huge[DIGESTS_KEY]) == len(small[DIGESTS_KEY]) < 200
    assert json.loads(huge[DIGESTS_KEY]) == {"spec": stanza_digest(huge_spec)}


def test_an_object_last_handled_by_kopfs_default_storage_is_read_through_it_then_migrated() -> None:
    storage = DigestDiffBaseStorage()
    legacy_essence = {"spec": {**SPEC, "limit": "2"}}
    raw = fraud_rule(SPEC, {LEGACY_KEY: json.dumps(legacy_essence) + "\n"})
    body = body_of(raw)
    assert storage.fetch(body=body) == legacy_essence
    assert diff_fields(storage, raw) == {("spec",)}

    patch = kopf.Patch()
    storage.store(body=body, patch=patch, essence=storage.build(body=body))
    assert patch["metadata"]["annotations"][LEGACY_KEY] is None
    migrated = handled(storage, raw)
    assert set(migrated["metadata"]["annotations"]) == {DIGESTS_KEY}
    assert storage.fetch(body=body_of(migrated)) == storage.build(body=body_of(migrated))


def test_kopfs_own_annotations_are_never_part_of_the_essence() -> None:
    storage = DigestDiffBaseStorage()
    raw = handled(storage, fraud_rule(SPEC, {"kopf.zalando.org/publish_rule": '{"started":"x"}'}))
    raw["metadata"]["annotations"]["kopf.zalando.org/publish_rule"] = '{"started":"y"}'
    assert diff_fields(storage, raw) == set()


def test_an_unreadable_digests_annotation_reads_as_never_handled() -> None:
    """kopf then runs the create handler, which publishes nothing new; a crash here would stop the object's events."""
    raw = fraud_rule(SPEC, {DIGESTS_KEY: "{not json"})
    assert DigestDiffBaseStorage().fetch(body=body_of(raw)) is None
    raw["metadata"]["annotations"][DIGESTS_KEY] = "[1, 2]"
    assert DigestDiffBaseStorage().fetch(body=body_of(raw)) is None
