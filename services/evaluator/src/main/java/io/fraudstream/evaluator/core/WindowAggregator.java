package io.fraudstream.evaluator.core;

/** A rule's incremental state over one log; built from the log, then told of every insertion. */
interface WindowAggregator {
  /** The event at {@code index} was just inserted (indices after it moved up by one). */
  void onInsert(EventLog log, long index);

  /**
   * Aggregate of member events in {@code [eventTimeMs - windowMs, eventTimeMs]}; {@code eventTimeMs} must be the time
   * of the event inserted last.
   */
  WindowAggregate query(EventLog log, long eventTimeMs);

  /**
   * The absolute index from which the next in-order insertions will read events forward (the far edge it walks), or
   * -1 if it reads none; a paged window keeps the events just after it in memory.
   */
  default long cursor() {
    return -1;
  }

  /**
   * How many values it holds apart from the events (a MIN/MAX window's deque entries; {@link GroupWindow#heapBytes}
   * charges each): with values that keep rising for a MIN (falling for a MAX), or recurring within the lateness, up to
   * one per event.
   */
  default int heldValues() {
    return 0;
  }

  /**
   * Its state with indices counted from {@code firstIndex}, the absolute index of the log's first live event; null
   * when it has none to resume from (empty, or a bucketed window, whose buckets are rows of their own).
   */
  default AggregatorSnapshot snapshot(long firstIndex) {
    return null;
  }
}
