package io.fraudstream.evaluator.core;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * One bucketed rule's member values pre-aggregated into buckets of {@code precisionMs} (port of
 * aggregates.BucketedWindow; CONTRACT section 4, {@code windowPrecisionSeconds}): bucket {@code floorDiv(t,
 * precisionMs)} holds every member value with event time t.
 *
 * <p>Contract: {@link #query} at t folds buckets {@code floorDiv(t - windowMs, p)} through {@code floorDiv(t, p)}, so
 * the window reaches up to one bucket further back than {@code t - windowMs} and takes in everything its newest bucket
 * holds. The buckets are state of their own (not derived from the group's events): the window keeps them across a
 * change of projection ({@link #rebind}) and persists them row by row ({@link #takeWritten}, {@link #takeDropped}).
 * The fold of all but the newest bucket of the last query is cached: an in-order query costs O(1), one whose range
 * moved or whose older buckets changed O(buckets).
 */
final class BucketedWindow implements WindowAggregator {
  // precisionMs, spec, buckets, written, dropped, closedValid, closedLow, closedHigh, closed
  private static final long SHALLOW_BYTES = HeapSizes.object(8 + 4 + 4 + 4 + 4 + 1 + 8 + 8 + 4);
  // An empty TreeMap (48 B), HashSet (16 B and its HashMap's 48 B) and LinkedHashSet (16 B and 56 B); the sets'
  // tables come and go with the buckets changed between two writes, which are few.
  private static final long COLLECTIONS_BYTES = 48 + 16 + 48 + 16 + 56;
  private final long precisionMs;
  private WindowSpec spec;
  private final TreeMap<Long, Bucket> buckets;
  private final Set<Long> written = new HashSet<>();
  private final Set<Long> dropped = new java.util.LinkedHashSet<>();
  private boolean closedValid;
  private long closedLow;
  private long closedHigh;
  private Bucket closed;

  /** A window of {@code spec} (bucketed) holding {@code state}, bucket index to bucket, which it owns from then on. */
  BucketedWindow(WindowSpec spec, TreeMap<Long, Bucket> state) {
    this.precisionMs = spec.precisionMs();
    this.spec = spec;
    this.buckets = state;
  }

  /** Follow a new spec of the same window (same key): new value projection, window length or aggregate. */
  void rebind(WindowSpec newSpec) {
    if (!newSpec.key.equals(spec.key)) {
      throw new IllegalArgumentException("rebind to another window");
    }
    spec = newSpec;
  }

  @Override
  public void onInsert(EventLog log, long index) {
    java.math.BigDecimal value = spec.valueOf.of(log.eventAt(index));
    if (value == null) {
      return;
    }
    long bucketIndex = Math.floorDiv(log.timeAt(index), precisionMs);
    buckets.merge(bucketIndex, Bucket.of(value), Bucket::plus);
    written.add(bucketIndex);
    dropped.remove(bucketIndex);
    if (closedValid && bucketIndex < closedHigh) {
      closedValid = false;
    }
  }

  @Override
  public WindowAggregate query(EventLog log, long eventTimeMs) {
    long low = Math.floorDiv(eventTimeMs - spec.windowMs, precisionMs);
    long high = Math.floorDiv(eventTimeMs, precisionMs);
    if (!closedValid || closedLow != low || closedHigh != high) {
      closed = null;
      for (Bucket bucket : buckets.subMap(low, true, high, false).values()) {
        closed = closed == null ? bucket : closed.plus(bucket);
      }
      closedValid = true;
      closedLow = low;
      closedHigh = high;
    }
    Bucket newest = buckets.get(high);
    Bucket folded = closed == null ? newest : newest == null ? closed : closed.plus(newest);
    if (folded == null) {
      return WindowAggregate.EMPTY;
    }
    return switch (spec.kind) {
      case MIN -> new WindowAggregate(folded.total(), folded.count(), folded.low());
      case MAX -> new WindowAggregate(folded.total(), folded.count(), folded.high());
      case SUM_COUNT -> new WindowAggregate(folded.total(), folded.count(), null);
    };
  }

  @Override
  public long heapBytes() {
    return SHALLOW_BYTES + COLLECTIONS_BYTES;
  }

  /** Drops the buckets wholly before {@code floorMs}. */
  void retain(long floorMs) {
    Map<Long, Bucket> stale = buckets.headMap(Math.floorDiv(floorMs, precisionMs), false);
    if (stale.isEmpty()) {
      return;
    }
    for (Long index : stale.keySet()) {
      dropped.add(index);
      written.remove(index);
    }
    stale.clear();
    closedValid = false;
  }

  /** The buckets, by index (an unmodifiable view). */
  java.util.NavigableMap<Long, Bucket> buckets() {
    return java.util.Collections.unmodifiableNavigableMap(buckets);
  }

  /** Indices of the buckets changed since the previous call (all still held). */
  List<Long> takeWritten() {
    List<Long> taken = new ArrayList<>(written);
    written.clear();
    return taken;
  }

  /** Indices of the buckets dropped since the previous call. */
  List<Long> takeDropped() {
    List<Long> taken = new ArrayList<>(dropped);
    dropped.clear();
    return taken;
  }
}
