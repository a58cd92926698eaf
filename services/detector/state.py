"""The detector's state in Spark's state store, with a per-process cache in front of it.

Per bucket: ValueState `detector` = (rule-set bytes, generation); MapState `groups` = group key -> (GroupHead
bytes, inline events); MapState `segments` = (group key, seq) -> event segment bytes of large groups (see
fraudstream_rules.persistence). A small group thus costs one read and one write per batch that touches it.

Python workers outlive micro-batches, so each keeps the windows it last used, decoded. A cached window is
trusted only while the bucket's generation in the state store equals the generation the cache was written
at: every committed batch bumps it, so a batch that failed after touching the cache, or a bucket last
processed by another worker, finds a mismatch and reloads from the store. The cache is an optimisation only;
the state store stays the truth.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field

from pyspark.sql.streaming.stateful_processor import MapState, ValueState

from fraudstream_rules.engine import Engine, GroupWindow
from fraudstream_rules.persistence import GroupHead, plan_flush, restore

MAX_CACHED_GROUPS = 200_000
IN_FLIGHT = -1


@dataclass
class BucketCache:
    """`generation` is the store generation this cache equals, or IN_FLIGHT while a batch is changing it."""

    generation: int
    detector: Engine
    windows: OrderedDict[str, tuple[GroupWindow, GroupHead | None]] = field(default_factory=OrderedDict)
    base_generation: int = 0


_CACHE: dict[tuple[str, int], BucketCache] = {}


def load_detector(instance: str, bucket: int, state: ValueState, lateness_ms: int, future_skew_ms: int) -> BucketCache:
    """Bucket `bucket`'s cache of detector `instance` (a Python worker outlives queries, and may serve several),
    valid for the generation in the store (a fresh one when it is not); the configured lateness and future skew
    override what the stored detector holds."""
    stored = state.get()
    generation = int(stored[1]) if stored else 0
    cached = _CACHE.get((instance, bucket))
    if cached is None or cached.generation != generation:
        if stored:
            detector = Engine.from_bytes(stored[0], lateness_ms=lateness_ms, future_skew_ms=future_skew_ms)
        else:
            detector = Engine(lateness_ms=lateness_ms, future_skew_ms=future_skew_ms)
        cached = _CACHE[instance, bucket] = BucketCache(generation, detector)
    # Until save_detector, this cache may hold changes the store will never see (a batch can fail midway).
    cached.base_generation, cached.generation = generation, IN_FLIGHT
    return cached


def save_detector(cache: BucketCache, state: ValueState) -> None:
    generation = cache.base_generation + 1
    state.update((cache.detector.to_bytes(), generation))
    cache.generation = generation


class CachedGroupStore:
    """The GroupStore of one bucket for one batch: reads through the cache, writes back at `flush`."""

    def __init__(self, cache: BucketCache, heads: MapState, segments: MapState) -> None:
        self._cache = cache
        self._heads = heads
        self._segments = segments
        self._dirty: set[str] = set()
        self._deleted: set[str] = set()

    def get(self, group_key: str) -> GroupWindow | None:
        windows = self._cache.windows
        if group_key in self._deleted:
            return None
        if group_key in windows:
            windows.move_to_end(group_key)
            return windows[group_key][0]
        stored = self._heads.getValue((group_key,))
        if stored is None:
            return None
        head = GroupHead.from_bytes(stored[0])
        payloads = []
        for ref in head.segments:
            segment = self._segments.getValue((group_key, ref.seq))
            assert segment is not None, f"segment {ref.seq} of {group_key} missing"
            payloads.append(segment[0])
        window = restore(head, stored[1], payloads)
        windows[group_key] = (window, head)
        return window

    def put(self, group_key: str, window: GroupWindow) -> None:
        windows = self._cache.windows
        head = windows[group_key][1] if group_key in windows else None
        windows[group_key] = (window, head)
        self._deleted.discard(group_key)
        self._dirty.add(group_key)

    def delete(self, group_key: str) -> None:
        self.get(group_key)  # make sure the head is known, to delete its segments
        entry = self._cache.windows.pop(group_key, None)
        if entry is not None and entry[1] is not None:
            for ref in entry[1].segments:
                self._segments.removeKey((group_key, ref.seq))
            self._heads.removeKey((group_key,))
        self._deleted.add(group_key)
        self._dirty.discard(group_key)

    def flush(self) -> None:
        """Write every changed group: one new segment and one head each, amortized (see persistence)."""
        windows = self._cache.windows
        for group_key in self._dirty:
            window, head = windows[group_key]
            plan = plan_flush(head, window, window.take_changes())
            for seq in plan.deletes:
                self._segments.removeKey((group_key, seq))
            for seq, payload in plan.puts:
                self._segments.updateValue((group_key, seq), (payload,))
            self._heads.updateValue((group_key,), (plan.head.to_bytes(), plan.inline))
            windows[group_key] = (window, plan.head)
        self._dirty.clear()
        while len(windows) > MAX_CACHED_GROUPS:
            windows.popitem(last=False)
