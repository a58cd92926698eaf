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
   * The heap it holds, as {@link HeapSizes} lays it out, growth room included: what it shares with every window of
   * its rule (the spec, the value function) is not counted, the decimals it holds are, even where an event still
   * decoded holds the same one. A bucketed window's buckets are not counted here: the group's window charges them
   * with those restored and not yet taken up ({@link GroupWindow#heapBytes}).
   */
  long heapBytes();

  /**
   * Its state with indices counted from {@code firstIndex}, the absolute index of the log's first live event; null
   * when it has none to resume from (empty, or a bucketed window, whose buckets are rows of their own).
   */
  default AggregatorSnapshot snapshot(long firstIndex) {
    return null;
  }
}
