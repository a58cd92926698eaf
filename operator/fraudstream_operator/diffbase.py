"""Change detection whose bookkeeping does not grow with the FraudRule.

kopf's default diff base keeps the whole last handled essence in one annotation. The API server bounds all of an
object's annotations together at 256 KiB but a FraudRule's spec only at its request size, so a spec beyond about
256 KiB (a long `IN` list) made every kopf patch fail with 422: its status was never written, neither Ready nor a
reason. `DigestDiffBaseStorage` keeps a digest of each stanza instead, a few hundred bytes whatever the spec.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, cast

import kopf

ANNOTATION_PREFIX = "kopf.zalando.org"  # kopf's own prefix: kopf leaves every annotation under it out of the essence
DIGESTS_KEY = "last-handled-digests"
PLACEHOLDER_KEY = "fraudstream.io/changedFrom"


def stanza_digest(value: object) -> str:
    """The SHA-256 of `value` as canonical JSON: equal for equal JSON values, whatever their key order."""
    canonical = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


class DigestDiffBaseStorage(kopf.AnnotationsDiffBaseStorage):
    """Keeps, in one annotation, the digest of each top-level stanza of the last handled essence.

    `fetch` returns None when the object was never handled (kopf's create), and otherwise the body's own essence
    with each stanza whose digest differs replaced by a placeholder. So kopf sees which stanzas changed, and its
    field filters (`field="spec"`) work, but not what they held before: a handler must not read `old` or `diff`.

    An object last handled by kopf's default storage is read through that storage's annotation until the next
    `store` (kopf stores after a change) removes it.
    """

    def __init__(self) -> None:
        super().__init__(prefix=ANNOTATION_PREFIX, key=DIGESTS_KEY, v1=False)
        self._legacy = kopf.AnnotationsDiffBaseStorage()

    def _stored_digests(self, body: kopf.Body) -> dict[str, str] | None:
        """The digests stored on `body`; None if there are none, or none readable (an annotation edited by hand),
        which kopf then handles as a creation: publishing again what is already published sends nothing."""
        for full_key in self.make_keys(self.key, body=body):
            encoded = body.metadata.annotations.get(full_key)
            try:
                decoded = json.loads(encoded) if encoded is not None else None
            except ValueError:
                continue
            if isinstance(decoded, dict):
                return {str(k): str(v) for k, v in decoded.items()}
        return None

    def fetch(self, *, body: kopf.Body) -> kopf.BodyEssence | None:
        digests = self._stored_digests(body)
        if digests is None:
            return self._legacy.fetch(body=body)
        current = cast(dict[str, Any], self.build(body=body))
        base: dict[str, Any] = {}
        for stanza, digest in digests.items():
            value = current.get(stanza)
            unchanged = value is not None and stanza_digest(value) == digest
            base[stanza] = value if unchanged else {PLACEHOLDER_KEY: digest}
        return cast(kopf.BodyEssence, base)

    def store(self, *, body: kopf.Body, patch: kopf.Patch, essence: kopf.BodyEssence) -> None:
        digests = {stanza: stanza_digest(value) for stanza, value in cast(dict[str, Any], essence).items()}
        encoded = json.dumps(digests, sort_keys=True, separators=(",", ":"))
        for full_key in self.make_keys(self.key, body=body):
            patch.metadata.annotations[full_key] = encoded
        for legacy_key in self._legacy.make_keys(self._legacy.key, body=body):
            if legacy_key in body.metadata.annotations:
                patch.metadata.annotations[legacy_key] = None
