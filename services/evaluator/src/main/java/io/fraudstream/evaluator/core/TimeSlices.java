package io.fraudstream.evaluator.core;

import java.math.BigDecimal;
import java.util.Arrays;

/**
 * A set of one rule's members summarized by event-time slice at several resolutions, for folding the members of a
 * time range without reading each: level 0 has {@link #SLOTS} slices of a 255th of the lateness up to the newest
 * time told, each further level as many slices twice as wide, up to the first level that reaches back the reach it
 * was built for. Each slice keeps its members' count, their fold (sum or extreme) and their first and last time.
 *
 * <p>Contracts: the caller builds it over a log ({@link #TimeSlices}: the log's members within its reach of a time)
 * and then tells it of every further member of its set ({@link #add}); a slice then holds every member of the set
 * with a time in it, from the time it came within reach of its level on. {@link #fold} returns exactly the live
 * members of the set in a range that lies within what was told: it uses a slice only when the slice's first member
 * is at or after {@link EventLog#evictedBeforeMs} and every member lies in the range, and reads the log's events
 * elsewhere (the range's ends, below {@code evictedBeforeMs}, and beyond the widest level's reach, which {@link
 * #reaches} tells). The events it reads at an end of a range within reach are those of one slice of the finest level
 * that reaches it. Building reads the events within the reach, so a caller builds for the reach its queries need,
 * not for its whole window. Not thread-safe.
 */
final class TimeSlices {
  /** Slices per level (a power of two: a slice's slot is its index's low bits). */
  static final int SLOTS = 256;

  /** The events a query of an aggregator without slices must read before it builds them. */
  static final int WORTH_BUILDING = 2 * SLOTS;

  /** How members combine into a slice's value: a sum, or the preferred of two. */
  @FunctionalInterface
  interface Fold {
    /** {@code acc} (null for none yet) combined with a member's {@code value}. */
    BigDecimal apply(BigDecimal acc, BigDecimal value);
  }

  /** The sum of the members. */
  static final Fold SUM = (acc, value) -> acc == null ? value : acc.add(value);

  /** The fold of the members in a range and their count; {@code value} is null when there are none. */
  record Folded(BigDecimal value, long count) {}

  // baseMs, reachMs, levels, valueOf, fold, keys, values, counts, firstMs, lastMs, newest
  private static final long SHALLOW_BYTES = HeapSizes.object(8 + 8 + 4 + 4 + 4 + 4 * 6);

  private final long baseMs; // level 0's slice width; level j's is baseMs << j
  private final long reachMs; // what it was built for
  private final int levels;
  private final ValueOf valueOf;
  private final Fold fold;
  // By level * SLOTS + slot: the slice index each slot holds, its members' fold, count, first and last time.
  private final long[] keys;
  private final BigDecimal[] values;
  private final long[] counts;
  private final long[] firstMs;
  private final long[] lastMs;
  private final long[] newest; // by level: the index of the slice holding the newest event time told

  /**
   * Slices of {@code log}'s events up to {@code newestMs} (those after it are for the caller to {@link #add} or not),
   * for a rule of {@code latenessMs}, whose levels reach back at least {@code reachMs} from the newest time told.
   */
  TimeSlices(EventLog log, long latenessMs, long reachMs, long newestMs, ValueOf valueOf, Fold fold) {
    // SLOTS - 1 whole slices before the newest one reach back the lateness from any time within that one.
    this.baseMs = Math.max(1, Math.floorDiv(latenessMs + SLOTS - 2, SLOTS - 1)); // rounded up
    this.reachMs = reachMs;
    int n = 1;
    while ((baseMs << (n - 1)) * (SLOTS - 1) < reachMs && n < 40) {
      n++;
    }
    this.levels = n;
    this.valueOf = valueOf;
    this.fold = fold;
    keys = new long[levels * SLOTS];
    values = new BigDecimal[levels * SLOTS];
    counts = new long[levels * SLOTS];
    firstMs = new long[levels * SLOTS];
    lastMs = new long[levels * SLOTS];
    newest = new long[levels];
    Arrays.fill(keys, Long.MIN_VALUE);
    for (int level = 0; level < levels; level++) {
      newest[level] = slice(newestMs, level);
    }
    long end = log.endIndex();
    for (long index = log.indexAtOrAfter(oldestMs(levels - 1)); index < end && log.timeAt(index) <= newestMs; index++) {
      add(log.timeAt(index), valueOf.of(log.eventAt(index)));
    }
  }

  /**
   * The reach to build slices for, for a query that needs them to reach back {@code neededMs} from the newest member:
   * twice that, up to the window and twice the lateness (what any query up to twice the lateness behind needs, so that
   * queries deep behind build once). Beyond it a query reads the events.
   */
  static long reachFor(long neededMs, long windowMs, long latenessMs) {
    return Math.min(2 * neededMs, windowMs + 2 * latenessMs);
  }

  /**
   * Whether {@code slices} (null: none yet) are to give way to slices built for {@code reachMs}: there are none, or
   * they neither reach a range from {@code fromMs} nor were built to reach as far ({@link #reachFor} caps the reach,
   * so a query beyond the cap reads the events rather than build again).
   */
  static boolean outgrown(TimeSlices slices, long fromMs, long reachMs) {
    return slices == null || (!slices.reaches(fromMs) && slices.reachMs < reachMs);
  }

  /**
   * Whether a range from {@code fromMs} lies within the widest level's reach, so that {@link #fold} reads the events
   * at its ends only (and those below {@link EventLog#evictedBeforeMs}).
   */
  boolean reaches(long fromMs) {
    return fromMs >= oldestMs(levels - 1);
  }

  private long slice(long timeMs, int level) {
    return Math.floorDiv(timeMs, baseMs << level);
  }

  private long startMs(long slice, int level) {
    return slice * (baseMs << level);
  }

  /** The start of the oldest slice {@code level} holds. */
  private long oldestMs(int level) {
    return startMs(newest[level] - SLOTS + 1, level);
  }

  private boolean covers(long slice, int level) {
    return slice > newest[level] - SLOTS;
  }

  private int slot(long slice, int level) {
    return level * SLOTS + (int) (slice & (SLOTS - 1));
  }

  /** An event at {@code timeMs} was inserted; {@code value} is what it contributes, null if it is not a member. */
  void add(long timeMs, BigDecimal value) {
    for (int level = 0; level < levels; level++) {
      long slice = slice(timeMs, level);
      newest[level] = Math.max(newest[level], slice);
      if (value == null || !covers(slice, level)) {
        continue;
      }
      int slot = slot(slice, level);
      if (keys[slot] != slice) { // the slot held a slice that is no longer covered, or none
        keys[slot] = slice;
        values[slot] = null;
        counts[slot] = 0;
        firstMs[slot] = timeMs;
        lastMs[slot] = timeMs;
      }
      values[slot] = fold.apply(values[slot], value);
      counts[slot]++;
      firstMs[slot] = Math.min(firstMs[slot], timeMs);
      lastMs[slot] = Math.max(lastMs[slot], timeMs);
    }
  }

  /** The live members of {@code [fromMs, toMs]} folded. */
  Folded fold(EventLog log, long fromMs, long toMs) {
    long evictedBeforeMs = log.evictedBeforeMs();
    BigDecimal acc = null;
    long count = 0;
    if (fromMs < evictedBeforeMs) { // slices there may count evicted members
      Folded read = read(log, fromMs, Math.min(toMs, evictedBeforeMs - 1), null, 0);
      acc = read.value();
      count = read.count();
    }
    long x = Math.max(fromMs, evictedBeforeMs);
    while (x <= toMs) {
      long next = -1;
      int finest = -1; // the finest level that covers x
      for (int level = levels - 1; level >= 0; level--) {
        long slice = slice(x, level);
        if (!covers(slice, level)) {
          break; // finer levels reach back less far
        }
        finest = level;
        int slot = slot(slice, level);
        boolean empty = keys[slot] != slice; // no member was told since the slice was covered
        if (empty || (firstMs[slot] >= x && lastMs[slot] <= toMs)) {
          if (!empty) {
            acc = fold.apply(acc, values[slot]);
            count += counts[slot];
          }
          next = startMs(slice + 1, level);
          break;
        }
      }
      if (next < 0) { // no slice lies within the range at x: read the events up to the end of the finest one
        long readTo =
            finest < 0
                ? Math.min(toMs, oldestMs(levels - 1) - 1)
                : Math.min(toMs, startMs(slice(x, finest) + 1, finest) - 1);
        Folded read = read(log, x, readTo, acc, count);
        acc = read.value();
        count = read.count();
        next = readTo + 1;
      }
      x = next;
    }
    return new Folded(acc, count);
  }

  /** {@code acc} and {@code count} with the members of {@code [fromMs, toMs]} read from the log. */
  private Folded read(EventLog log, long fromMs, long toMs, BigDecimal acc, long count) {
    long end = log.endIndex();
    for (long index = log.indexAtOrAfter(fromMs); index < end && log.timeAt(index) <= toMs; index++) {
      BigDecimal value = valueOf.of(log.eventAt(index));
      if (value != null) {
        acc = fold.apply(acc, value);
        count++;
      }
    }
    return new Folded(acc, count);
  }

  /** The heap it holds, each slot taken to hold a decimal of its own (a slice of one member shares its event's). */
  long heapBytes() {
    int slots = levels * SLOTS;
    return SHALLOW_BYTES
        + 4 * HeapSizes.longArray(slots)
        + HeapSizes.referenceArray(slots)
        + HeapSizes.longArray(levels)
        + slots * HeapSizes.decimal();
  }
}
