package io.fraudstream.evaluator.core;

import java.util.List;

/**
 * What one rule needs from a group's window. Equal specs (all but {@code valueOf}) mean an existing aggregator can
 * be kept; {@code key} is (uid, window start seq, window start ts, field projection). For a bucketed rule ({@code
 * precisionMs} set) the key names its buckets instead (no projection, the precision): they are kept, whatever else
 * changes, while the key is the same.
 */
final class WindowSpec {
  enum Kind {
    SUM_COUNT,
    MIN,
    MAX;

    static Kind of(AggregatorFunction function) {
      return switch (function) {
        case MIN -> MIN;
        case MAX -> MAX;
        default -> SUM_COUNT;
      };
    }
  }

  /** fieldNames is null and precisionMs set for a bucketed rule's key, and the other way round. */
  record Key(String uid, long windowStartSeq, long windowStartTsMs, List<String> fieldNames, Long precisionMs) {}

  final Key key;
  final Kind kind;
  final long windowMs;
  final long latenessMs;
  final ValueOf valueOf;

  WindowSpec(Key key, Kind kind, long windowMs, long latenessMs, ValueOf valueOf) {
    this.key = key;
    this.kind = kind;
    this.windowMs = windowMs;
    this.latenessMs = latenessMs;
    this.valueOf = valueOf;
  }

  /** The width of the rule's buckets; null for an exact window. */
  Long precisionMs() {
    return key.precisionMs();
  }

  /** A fresh exact aggregator over the log's current content (bucketed ones are {@link BucketedWindow}s). */
  WindowAggregator build(EventLog log, Long maxEventTimeMs) {
    if (precisionMs() != null) {
      throw new IllegalStateException("bucketed windows are not derived from the log");
    }
    if (kind == Kind.SUM_COUNT) {
      return new SumCountWindow(log, maxEventTimeMs, this);
    }
    return new ExtremeWindow(log, maxEventTimeMs, windowMs, latenessMs, valueOf, kind == Kind.MIN);
  }

  /** What makes specs equal: all but the value function. */
  record Identity(Key key, Kind kind, long windowMs, long latenessMs) {}

  Identity identity() {
    return new Identity(key, kind, windowMs, latenessMs);
  }

  /**
   * Its exact aggregator resumed from {@code saved}, taken from an aggregator of an equal spec over the same events
   * (their first live one now at {@code firstIndex}); null when {@code saved} is not of its kind.
   */
  WindowAggregator resume(AggregatorSnapshot saved, long firstIndex) {
    if (kind == Kind.SUM_COUNT && saved instanceof AggregatorSnapshot.SumCount sumCount) {
      return new SumCountWindow(sumCount, firstIndex, this);
    }
    if (kind != Kind.SUM_COUNT && saved instanceof AggregatorSnapshot.Extreme extreme) {
      return new ExtremeWindow(extreme, firstIndex, windowMs, latenessMs, valueOf, kind == Kind.MIN);
    }
    return null;
  }

  @Override
  public boolean equals(Object other) {
    return other instanceof WindowSpec that && identity().equals(that.identity());
  }

  @Override
  public int hashCode() {
    return identity().hashCode();
  }
}
