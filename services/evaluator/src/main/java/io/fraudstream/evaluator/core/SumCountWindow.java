package io.fraudstream.evaluator.core;

import java.math.BigDecimal;

/**
 * Exact running sum and count of member values in the frontier window {@code [M - windowMs, M]} (SUM, COUNT, AVG);
 * amortized O(1) per in-order insertion, O(events within the lateness span) for an out-of-order one.
 */
final class SumCountWindow implements WindowAggregator {
  // windowMs, valueOf, empty, maxMs, total, count, front
  private static final long SHALLOW_BYTES = HeapSizes.object(8 + 4 + 1 + 8 + 4 + 8 + 8);
  private final long windowMs;
  private final ValueOf valueOf;
  // The newest member time, unboxed (a box per insertion would be a young object kept alive by a cached window).
  private boolean empty;
  private long maxMs;
  private BigDecimal total = BigDecimal.ZERO;
  private long count;
  private long front;

  SumCountWindow(EventLog log, Long maxEventTimeMs, long windowMs, ValueOf valueOf) {
    this.windowMs = windowMs;
    this.valueOf = valueOf;
    this.empty = maxEventTimeMs == null;
    this.maxMs = empty ? 0 : maxEventTimeMs;
    long end = log.endIndex();
    front = maxEventTimeMs == null ? end : log.indexAtOrAfter(maxEventTimeMs - windowMs);
    for (long index = front; index < end; index++) {
      add(log, index, 1);
    }
  }

  /** Resumes {@code saved} over the log it was taken from, whose first live event is now at {@code firstIndex}. */
  SumCountWindow(AggregatorSnapshot.SumCount saved, long firstIndex, long windowMs, ValueOf valueOf) {
    this.windowMs = windowMs;
    this.valueOf = valueOf;
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

  private void add(EventLog log, long index, int sign) {
    BigDecimal value = valueOf.of(log.eventAt(index));
    if (value != null) {
      total = sign > 0 ? total.add(value) : total.subtract(value);
      count += sign;
    }
  }

  @Override
  public void onInsert(EventLog log, long index) {
    long eventTimeMs = log.timeAt(index);
    if (empty || eventTimeMs >= maxMs) {
      add(log, index, 1);
      maxMs = eventTimeMs;
      empty = false;
      long lowMs = eventTimeMs - windowMs;
      while (log.timeAt(front) < lowMs) {
        add(log, front, -1);
        front++;
      }
    } else if (index < front || (index == front && eventTimeMs < maxMs - windowMs)) {
      front++;
    } else {
      add(log, index, 1);
    }
  }

  @Override
  public long cursor() {
    return front;
  }

  @Override
  public long heapBytes() {
    return SHALLOW_BYTES + HeapSizes.decimal();
  }

  @Override
  public WindowAggregate query(EventLog log, long eventTimeMs) {
    if (empty) {
      throw new IllegalStateException("query before any insertion");
    }
    if (eventTimeMs >= maxMs) {
      return new WindowAggregate(total, count, null);
    }
    // [t - w, t] = frontier [M - w, M] minus members in (t, M] plus members in [t - w, min(M - w, t + 1)).
    BigDecimal sum = total;
    long n = count;
    long index = log.endIndex() - 1;
    while (index >= front && log.timeAt(index) > eventTimeMs) {
      BigDecimal value = valueOf.of(log.eventAt(index));
      if (value != null) {
        sum = sum.subtract(value);
        n--;
      }
      index--;
    }
    index = log.indexAtOrAfter(eventTimeMs - windowMs);
    while (index < front && log.timeAt(index) <= eventTimeMs) {
      BigDecimal value = valueOf.of(log.eventAt(index));
      if (value != null) {
        sum = sum.add(value);
        n++;
      }
      index++;
    }
    return new WindowAggregate(sum, n, null);
  }
}
