package io.fraudstream.evaluator.core;

/**
 * Read access to a group's events by absolute index: sorted by event time (ties in insertion order), indices stable
 * under eviction and compaction (port of aggregates.EventLog).
 */
interface EventLog {
  /** One past the absolute index of the last event. */
  long endIndex();

  long timeAt(long index);

  StoredEvent eventAt(long index);

  /** Absolute index of the first live event with event time at or after {@code eventTimeMs} (endIndex() if none). */
  long indexAtOrAfter(long eventTimeMs);

  /**
   * A time above that of every event evicted from the log since it was built or restored ({@link Long#MIN_VALUE} if
   * none was): live events may lie below it too, where a floor moved down.
   */
  long evictedBeforeMs();
}
