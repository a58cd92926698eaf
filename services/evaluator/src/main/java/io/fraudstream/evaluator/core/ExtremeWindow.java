package io.fraudstream.evaluator.core;

import java.math.BigDecimal;
import java.util.function.LongPredicate;

/**
 * Minimum (or maximum) of member values in the frontier window, by two monotonic deques: {@code settled} covers
 * {@code [M - windowMs, M - latenessMs)} and {@code tail} covers {@code [max(M - windowMs, M - latenessMs), M]},
 * where most out-of-order insertions land. Each deque holds the members no later member beats, so its front is its
 * extreme; the settled deque keeps only the latest of equal values, the tail the earliest, so that a query for an
 * event a little behind the newest finds the tail's front at or before it whenever the extreme's value was reached by
 * then (a repeated extreme, such as a round amount, would otherwise move the front past it and make the query scan
 * the lateness). An insertion older than the lateness goes into the settled deque in O(its length), and its query
 * scans the window (the costs are Python's twin's, aggregates.py); a query within the lateness whose tail extreme
 * lies after its event scans the tail up to the event. Once either scan would read more than {@link
 * TimeSlices#WORTH_BUILDING} events, the rule keeps {@link TimeSlices} of its members and folds them instead, at
 * O(slice levels) more per insertion. They reach back twice as far as the query that built them needed, up to the
 * window and twice the lateness (a query deep behind needs its whole window), and are built again for a query that
 * needs more.
 */
final class ExtremeWindow implements WindowAggregator {
  // windowMs, latenessMs, valueOf, preferLow, empty, maxMs, settled, tail, settledEnd, slices
  private static final long SHALLOW_BYTES = HeapSizes.object(8 + 8 + 4 + 1 + 1 + 8 + 4 + 4 + 8 + 4);
  private final long windowMs;
  private final long latenessMs;
  private final ValueOf valueOf;
  private final boolean preferLow;
  // The newest member time, unboxed (a box per insertion would be a young object kept alive by a cached window).
  private boolean empty;
  private long maxMs;
  private final CandidateDeque settled = new CandidateDeque();
  private final CandidateDeque tail = new CandidateDeque();
  private long settledEnd;
  private TimeSlices slices; // null until a query behind the newest event would read many events

  ExtremeWindow(
      EventLog log, Long maxEventTimeMs, long windowMs, long latenessMs, ValueOf valueOf, boolean preferLow) {
    this.windowMs = windowMs;
    this.latenessMs = latenessMs;
    this.valueOf = valueOf;
    this.preferLow = preferLow;
    this.empty = maxEventTimeMs == null;
    this.maxMs = empty ? 0 : maxEventTimeMs;
    long end = log.endIndex();
    if (maxEventTimeMs == null) {
      settledEnd = end;
      return;
    }
    long settledMs = maxEventTimeMs - latenessMs;
    long lowMs = maxEventTimeMs - windowMs;
    settledEnd = log.indexAtOrAfter(settledMs);
    for (long index = log.indexAtOrAfter(lowMs); index < settledEnd; index++) {
      push(settled, log, index);
    }
    for (long index = log.indexAtOrAfter(Math.max(lowMs, settledMs)); index < end; index++) {
      push(tail, log, index);
    }
  }

  /** Resumes {@code saved} over the log it was taken from, whose first live event is now at {@code firstIndex}. */
  ExtremeWindow(
      AggregatorSnapshot.Extreme saved,
      long firstIndex,
      long windowMs,
      long latenessMs,
      ValueOf valueOf,
      boolean preferLow) {
    this.windowMs = windowMs;
    this.latenessMs = latenessMs;
    this.valueOf = valueOf;
    this.preferLow = preferLow;
    this.empty = false;
    this.maxMs = saved.maxMs();
    this.settledEnd = firstIndex + saved.settledEnd();
    refill(settled, saved.settled());
    refill(tail, saved.tail());
  }

  private static void refill(CandidateDeque deque, AggregatorSnapshot.Candidates candidates) {
    for (int i = 0; i < candidates.times().length; i++) {
      deque.addLast(candidates.times()[i], candidates.values()[i]);
    }
  }

  private static AggregatorSnapshot.Candidates candidates(CandidateDeque deque) {
    long[] times = new long[deque.size()];
    BigDecimal[] values = new BigDecimal[deque.size()];
    for (int i = 0; i < times.length; i++) {
      times[i] = deque.timeAt(i);
      values[i] = deque.valueAt(i);
    }
    return new AggregatorSnapshot.Candidates(times, values);
  }

  @Override
  public AggregatorSnapshot snapshot(long firstIndex) {
    return empty
        ? null
        : new AggregatorSnapshot.Extreme(maxMs, settledEnd - firstIndex, candidates(settled), candidates(tail));
  }

  private boolean beats(BigDecimal left, BigDecimal right) {
    int c = left.compareTo(right);
    return preferLow ? c < 0 : c > 0;
  }

  /**
   * Whether a member of {@code value} makes an earlier candidate of {@code earlier} redundant: when it beats it, and
   * in the settled deque also when it equals it (the tail keeps the earliest of equal values).
   */
  private boolean displaces(CandidateDeque candidates, BigDecimal value, BigDecimal earlier) {
    return candidates == tail ? beats(value, earlier) : !beats(earlier, value);
  }

  private void push(CandidateDeque candidates, EventLog log, long index) {
    push(candidates, log.timeAt(index), valueOf.of(log.eventAt(index)));
  }

  private void push(CandidateDeque candidates, long timeMs, BigDecimal value) {
    if (value == null) {
      return;
    }
    while (!candidates.isEmpty() && displaces(candidates, value, candidates.lastValue())) {
      candidates.removeLast();
    }
    candidates.addLast(timeMs, value);
  }

  /**
   * Adds an out-of-order member: a candidate unless the next later candidate displaces it; a candidate drops the
   * earlier ones it displaces.
   */
  private void insertBetween(CandidateDeque candidates, long eventTimeMs, BigDecimal value) {
    CandidateDeque later = new CandidateDeque(); // the later candidates, latest first: its last is the next later one
    while (!candidates.isEmpty() && candidates.lastTime() > eventTimeMs) {
      later.addLast(candidates.lastTime(), candidates.lastValue());
      candidates.removeLast();
    }
    if (later.isEmpty() || !displaces(candidates, later.lastValue(), value)) {
      while (!candidates.isEmpty() && displaces(candidates, value, candidates.lastValue())) {
        candidates.removeLast();
      }
      candidates.addLast(eventTimeMs, value);
    }
    while (!later.isEmpty()) {
      candidates.addLast(later.lastTime(), later.lastValue());
      later.removeLast();
    }
  }

  @Override
  public void onInsert(EventLog log, long index) {
    long eventTimeMs = log.timeAt(index);
    if (empty || eventTimeMs >= maxMs) {
      maxMs = eventTimeMs;
      empty = false;
      long settledMs = eventTimeMs - latenessMs;
      long lowMs = eventTimeMs - windowMs;
      while (log.timeAt(settledEnd) < settledMs) {
        if (log.timeAt(settledEnd) >= lowMs) {
          push(settled, log, settledEnd);
        }
        settledEnd++;
      }
      while (!settled.isEmpty() && settled.firstTime() < lowMs) {
        settled.removeFirst();
      }
      long tailLowMs = Math.max(lowMs, settledMs);
      while (!tail.isEmpty() && tail.firstTime() < tailLowMs) {
        tail.removeFirst();
      }
      BigDecimal value = valueOf.of(log.eventAt(index));
      push(tail, eventTimeMs, value);
      if (slices != null) {
        slices.add(eventTimeMs, value);
      }
    } else {
      long settledMs = maxMs - latenessMs;
      if (eventTimeMs < settledMs) {
        settledEnd++; // the insertion moved the first unsettled event up by one
      }
      BigDecimal value = eventTimeMs >= maxMs - windowMs || slices != null ? valueOf.of(log.eventAt(index)) : null;
      if (value != null && eventTimeMs >= maxMs - windowMs) {
        insertBetween(eventTimeMs >= settledMs ? tail : settled, eventTimeMs, value);
      }
      if (slices != null) {
        slices.add(eventTimeMs, value);
      }
    }
  }

  @Override
  public long cursor() {
    return settledEnd;
  }

  /**
   * With its two deques: with values that keep rising for a MIN (falling for a MAX), or recurring within the
   * lateness, up to a candidate per event.
   */
  @Override
  public long heapBytes() {
    return SHALLOW_BYTES + settled.heapBytes() + tail.heapBytes() + (slices == null ? 0 : slices.heapBytes());
  }

  private BigDecimal best(BigDecimal left, BigDecimal right) {
    if (left == null) {
      return right;
    }
    if (right == null) {
      return left;
    }
    return beats(right, left) ? right : left;
  }

  private BigDecimal scan(EventLog log, BigDecimal best, long fromMs, LongPredicate stop) {
    long end = log.endIndex();
    for (long index = log.indexAtOrAfter(fromMs); index < end && !stop.test(log.timeAt(index)); index++) {
      best = best(best, valueOf.of(log.eventAt(index)));
    }
    return best;
  }

  @Override
  public WindowAggregate query(EventLog log, long eventTimeMs) {
    if (empty) {
      throw new IllegalStateException("query before any insertion");
    }
    BigDecimal best = settled.isEmpty() ? null : settled.firstValue();
    if (eventTimeMs >= maxMs) {
      return new WindowAggregate(BigDecimal.ZERO, 0, best(best, tail.isEmpty() ? null : tail.firstValue()));
    }
    long lowMs = eventTimeMs - windowMs;
    if (eventTimeMs < maxMs - latenessMs) { // deep in the past: the deques do not cover [t - w, t]
      TimeSlices.Folded folded = slices(log, lowMs, eventTimeMs);
      return new WindowAggregate(
          BigDecimal.ZERO,
          0,
          folded != null ? folded.value() : scan(log, null, lowMs, time -> time > eventTimeMs));
    }
    // [t - w, t] = settled deque [M - w, M - L) + scan [t - w, min(M - w, M - L))
    //   + scan [max(t - w, M - L), min(d, t + 1)) + the tail's part [d, t],
    // d = max(M - w, M - L) being where the tail deque starts. The tail's front is the earliest member of [d, M] with
    // its extreme value: when it lies at or before t it is also the extreme of [d, t], so only a tail whose extreme
    // value was first reached after t (rare for small disorder) is scanned; the other scans span at most M - t.
    long settledMs = maxMs - latenessMs;
    long stopMs = Math.min(maxMs - windowMs, settledMs);
    long tailStartMs = Math.max(maxMs - windowMs, settledMs);
    best = scan(log, best, lowMs, time -> time >= stopMs);
    long tailStopMs = Math.min(tailStartMs, eventTimeMs + 1);
    best = scan(log, best, Math.max(lowMs, settledMs), time -> time >= tailStopMs);
    if (!tail.isEmpty() && tail.firstTime() <= eventTimeMs) {
      return new WindowAggregate(BigDecimal.ZERO, 0, best(best, tail.firstValue()));
    }
    TimeSlices.Folded tailPart = slices(log, tailStartMs, eventTimeMs);
    best =
        tailPart != null
            ? best(best, tailPart.value())
            : scan(log, best, tailStartMs, time -> time > eventTimeMs);
    return new WindowAggregate(BigDecimal.ZERO, 0, best);
  }

  /**
   * The members of {@code [fromMs, eventTimeMs]} folded by the slices, built first if reading them would read more
   * than {@link TimeSlices#WORTH_BUILDING} events; null when there are none and reading is cheaper.
   */
  private TimeSlices.Folded slices(EventLog log, long fromMs, long eventTimeMs) {
    long reachMs = TimeSlices.reachFor(maxMs - fromMs, windowMs, latenessMs);
    if (TimeSlices.outgrown(slices, fromMs, reachMs)) {
      if (log.indexAtOrAfter(eventTimeMs + 1) - log.indexAtOrAfter(fromMs) <= TimeSlices.WORTH_BUILDING) {
        return slices == null ? null : slices.fold(log, fromMs, eventTimeMs);
      }
      slices = new TimeSlices(log, latenessMs, reachMs, maxMs, valueOf, this::best);
    }
    return slices.fold(log, fromMs, eventTimeMs);
  }
}
