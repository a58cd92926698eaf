package io.fraudstream.evaluator.core;

import java.math.BigDecimal;

/**
 * Exact running sum and count of member values in the frontier window {@code [M - windowMs, M]} (SUM, COUNT, AVG);
 * amortized O(1) per in-order insertion (plus O(slice levels) once it keeps slices). A query for an event at t
 * behind M takes the frontier's, less the members of {@code (t, M]}, plus those of {@code [t - windowMs, M -
 * windowMs)}, reading their events; once that would read more than {@link TimeSlices#WORTH_BUILDING} events, it
 * folds {@link TimeSlices} instead: one of the members up to M, and one of those that left the frontier ({@code [..,
 * M - windowMs)}), each read at the ends of its range only. Both reach back twice as far as the query that built
 * them needed (M - t), up to the window and twice the lateness, and are built again for a query that needs more, so
 * a build reads a few times that query's share of the events, not the window's.
 */
final class SumCountWindow implements WindowAggregator {
  // spec, empty, maxMs, total, count, front, slices, leftSlices
  private static final long SHALLOW_BYTES = HeapSizes.object(4 + 1 + 8 + 4 + 8 + 8 + 4 + 4);
  private final WindowSpec spec; // its window, lateness and value function
  // The newest member time, unboxed (a box per insertion would be a young object kept alive by a cached window).
  private boolean empty;
  private long maxMs;
  private BigDecimal total = BigDecimal.ZERO;
  private long count;
  private long front;
  // Null until a query behind the newest event would read many events: the members up to M, and those that left the
  // frontier (with a time before M - windowMs, told as they leave or are inserted there).
  private TimeSlices slices;
  private TimeSlices leftSlices;

  SumCountWindow(EventLog log, Long maxEventTimeMs, WindowSpec spec) {
    this.spec = spec;
    this.empty = maxEventTimeMs == null;
    this.maxMs = empty ? 0 : maxEventTimeMs;
    long end = log.endIndex();
    front = maxEventTimeMs == null ? end : log.indexAtOrAfter(maxEventTimeMs - spec.windowMs);
    for (long index = front; index < end; index++) {
      add(log, index, 1);
    }
  }

  /** Resumes {@code saved} over the log it was taken from, whose first live event is now at {@code firstIndex}. */
  SumCountWindow(AggregatorSnapshot.SumCount saved, long firstIndex, WindowSpec spec) {
    this.spec = spec;
    this.empty = false;
    this.maxMs = saved.maxMs();
    this.total = saved.total();
    this.count = saved.count();
    this.front = firstIndex + saved.front();
  }

  @Override
  public AggregatorSnapshot snapshot(long firstIndex) {
    return empty ? null : new AggregatorSnapshot.SumCount(maxMs, total, count, front - firstIndex);
  }

  /** Adds ({@code sign} 1) or removes (-1) the event at {@code index}; returns its value, null for a non-member. */
  private BigDecimal add(EventLog log, long index, int sign) {
    BigDecimal value = spec.valueOf.of(log.eventAt(index));
    if (value != null) {
      total = sign > 0 ? total.add(value) : total.subtract(value);
      count += sign;
    }
    return value;
  }

  @Override
  public void onInsert(EventLog log, long index) {
    long eventTimeMs = log.timeAt(index);
    BigDecimal value;
    if (empty || eventTimeMs >= maxMs) {
      value = add(log, index, 1);
      maxMs = eventTimeMs;
      empty = false;
      long lowMs = eventTimeMs - spec.windowMs;
      while (log.timeAt(front) < lowMs) {
        BigDecimal left = add(log, front, -1);
        if (leftSlices != null) {
          leftSlices.add(log.timeAt(front), left);
        }
        front++;
      }
    } else if (index < front || (index == front && eventTimeMs < maxMs - spec.windowMs)) {
      front++;
      value = slices == null ? null : spec.valueOf.of(log.eventAt(index));
      if (leftSlices != null) {
        leftSlices.add(eventTimeMs, value);
      }
    } else {
      value = add(log, index, 1);
    }
    if (slices != null) {
      slices.add(eventTimeMs, value);
    }
  }

  @Override
  public long cursor() {
    return front;
  }

  @Override
  public long heapBytes() {
    return SHALLOW_BYTES
        + HeapSizes.decimal()
        + (slices == null ? 0 : slices.heapBytes() + leftSlices.heapBytes());
  }

  @Override
  public WindowAggregate query(EventLog log, long eventTimeMs) {
    if (empty) {
      throw new IllegalStateException("query before any insertion");
    }
    if (eventTimeMs >= maxMs) {
      return new WindowAggregate(total, count, null);
    }
    long lowMs = maxMs - spec.windowMs;
    // A build reads the events within its reach (TimeSlices.reachFor), for a long window far fewer than the window's.
    long reachMs = TimeSlices.reachFor(maxMs - eventTimeMs, spec.windowMs, spec.latenessMs);
    if (TimeSlices.outgrown(slices, eventTimeMs + 1, reachMs)
        && readsBehind(log, eventTimeMs) > TimeSlices.WORTH_BUILDING) {
      slices = new TimeSlices(log, spec.latenessMs, reachMs, maxMs, spec.valueOf, TimeSlices.SUM);
      leftSlices = new TimeSlices(log, spec.latenessMs, reachMs, lowMs - 1, spec.valueOf, TimeSlices.SUM);
    }
    if (slices != null) { // as below; members of (t, M - w) are both after t and left: they cancel out
      TimeSlices.Folded after = slices.fold(log, eventTimeMs + 1, maxMs);
      TimeSlices.Folded left = leftSlices.fold(log, eventTimeMs - spec.windowMs, lowMs - 1);
      BigDecimal sum = total;
      if (after.value() != null) {
        sum = sum.subtract(after.value());
      }
      if (left.value() != null) {
        sum = sum.add(left.value());
      }
      return new WindowAggregate(sum, count - after.count() + left.count(), null);
    }
    // [t - w, t] = frontier [M - w, M] minus members in (t, M] plus members in [t - w, min(M - w, t + 1)).
    BigDecimal sum = total;
    long n = count;
    for (long index = log.endIndex() - 1; index >= front && log.timeAt(index) > eventTimeMs; index--) {
      BigDecimal value = spec.valueOf.of(log.eventAt(index));
      if (value != null) {
        sum = sum.subtract(value);
        n--;
      }
    }
    for (long index = log.indexAtOrAfter(eventTimeMs - spec.windowMs);
        index < front && log.timeAt(index) <= eventTimeMs;
        index++) {
      BigDecimal value = spec.valueOf.of(log.eventAt(index));
      if (value != null) {
        sum = sum.add(value);
        n++;
      }
    }
    return new WindowAggregate(sum, n, null);
  }

  /** How many events the query of an event at {@code eventTimeMs} behind the newest reads without slices. */
  private long readsBehind(EventLog log, long eventTimeMs) {
    long firstAfter = log.indexAtOrAfter(eventTimeMs + 1);
    long after = log.endIndex() - Math.max(front, firstAfter);
    long farEdge = Math.max(0, Math.min(front, firstAfter) - log.indexAtOrAfter(eventTimeMs - spec.windowMs));
    return after + farEdge;
  }
}
