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
}
