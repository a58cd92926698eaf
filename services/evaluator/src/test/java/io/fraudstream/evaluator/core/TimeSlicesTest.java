package io.fraudstream.evaluator.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * TimeSlices over a group's log, against a brute-force fold of the live inserted events: built over events already
 * inserted, then told of insertions in order, behind the newest (within the lateness and deep behind it), and far
 * ahead of it (a jump past every slice of the finer levels), with the group's floor evicting the oldest; ranges from
 * anywhere in the window (and before it) up to the newest.
 */
class TimeSlicesTest {
  private static final List<String> FIELDS = List.of("amount");
  private static final ValueOf AMOUNT = event -> event.amount(0);
  private static final long LATENESS_MS = 2_550; // ten-millisecond slices at level 0
  private static final long WINDOW_MS = 40 * LATENESS_MS; // seven levels
  private static final TimeSlices.Fold MIN = (acc, value) -> acc == null || value.compareTo(acc) < 0 ? value : acc;

  private static final class Inserted {
    final long timeMs;
    final BigDecimal value;
    boolean evicted;

    Inserted(long timeMs, BigDecimal value) {
      this.timeMs = timeMs;
      this.value = value;
    }
  }

  private final GroupWindow log = new GroupWindow(FIELDS);
  private final List<Inserted> inserted = new ArrayList<>();
  private long nextId;

  TimeSlicesTest() {
    log.prepare(FIELDS, Map.of());
  }

  private void insert(long timeMs, BigDecimal value, TimeSlices slices) {
    log.insert(timeMs, nextId, 0, nextId, 1, new Object[] {value});
    nextId++;
    inserted.add(new Inserted(timeMs, value));
    if (slices != null) {
      slices.add(timeMs, value);
    }
  }

  /** Sets the log's floor, which evicts the events below it (a floor that moves down brings none back). */
  private void setFloor(long floorMs) {
    log.setFloor(floorMs);
    for (Inserted event : inserted) {
      event.evicted |= event.timeMs < floorMs;
    }
  }

  private TimeSlices.Folded bruteForce(long fromMs, long toMs, TimeSlices.Fold fold) {
    BigDecimal acc = null;
    long count = 0;
    for (Inserted event : inserted) {
      if (!event.evicted && event.value != null && event.timeMs >= fromMs && event.timeMs <= toMs) {
        acc = fold.apply(acc, event.value);
        count++;
      }
    }
    return new TimeSlices.Folded(acc, count);
  }

  private static void assertFolded(TimeSlices.Folded expected, TimeSlices.Folded actual, String what) {
    assertEquals(expected.count(), actual.count(), what + ": count");
    if (expected.value() == null) {
      assertNull(actual.value(), what);
    } else {
      assertEquals(0, expected.value().compareTo(actual.value()), what + ": " + actual.value());
    }
  }

  @Test
  void sumsAgreeWithTheBruteForceForEveryRange() {
    randomInsertionsAndFolds(TimeSlices.SUM, WINDOW_MS + 2 * LATENESS_MS);
  }

  @Test
  void extremesAgreeWithTheBruteForceForEveryRange() {
    randomInsertionsAndFolds(MIN, WINDOW_MS + 2 * LATENESS_MS);
  }

  /** Slices that reach back twice the lateness: many ranges start beyond their reach, where they read events. */
  @Test
  void sumsAgreeWithTheBruteForceBeyondTheSlicesReach() {
    int reached = randomInsertionsAndFolds(TimeSlices.SUM, 2 * LATENESS_MS);
    assertTrue(reached > 0 && reached < 6_000, reached + " of 6 000 ranges within reach");
  }

  @Test
  void extremesAgreeWithTheBruteForceBeyondTheSlicesReach() {
    int reached = randomInsertionsAndFolds(MIN, 2 * LATENESS_MS);
    assertTrue(reached > 0 && reached < 6_000, reached + " of 6 000 ranges within reach");
  }

  /** Checks 6 000 random insertions and folds against the brute force; returns how many ranges the slices reached. */
  private int randomInsertionsAndFolds(TimeSlices.Fold fold, long reachMs) {
    Random random = new Random(42);
    long newest = 100_000;
    for (int i = 0; i < 500; i++) { // before the slices are built
      newest += random.nextInt(8);
      insert(newest, BigDecimal.valueOf(random.nextInt(1_000) - 500), null);
    }
    TimeSlices slices = new TimeSlices(log, LATENESS_MS, reachMs, newest, AMOUNT, fold);
    int reached = 0;
    for (int i = 0; i < 6_000; i++) {
      int shape = random.nextInt(100);
      long timeMs;
      if (shape < 60) {
        timeMs = newest + random.nextInt(200);
      } else if (shape < 80) {
        timeMs = newest - random.nextInt((int) LATENESS_MS);
      } else if (shape < 99) {
        timeMs = newest - random.nextInt((int) WINDOW_MS); // deep behind, some below the floor (evicted at once)
      } else {
        timeMs = newest + 3 * LATENESS_MS + random.nextInt(100); // past every slice of level 0
      }
      BigDecimal value = random.nextInt(10) == 0 ? null : BigDecimal.valueOf(random.nextInt(1_000) - 500);
      insert(timeMs, value, slices);
      newest = Math.max(newest, timeMs);
      // As the engine does after each insertion; the floor keeps half the window mostly (ranges start before it
      // too), all of it at times: the floor moves down, and live events are inserted among evicted ones.
      setFloor(newest - (i % 500 < 400 ? (WINDOW_MS + LATENESS_MS) / 2 : WINDOW_MS + LATENESS_MS));
      long toMs = newest - random.nextInt((int) (2 * LATENESS_MS));
      long fromMs = toMs - random.nextInt((int) (WINDOW_MS + LATENESS_MS));
      assertFolded(bruteForce(fromMs, toMs, fold), slices.fold(log, fromMs, toMs), "[" + fromMs + ", " + toMs + "]");
      reached += slices.reaches(fromMs) ? 1 : 0;
    }
    return reached;
  }

  private static final int DENSE = 100_000;

  /**
   * Inserts {@link #DENSE} events 3 ms apart from 0; returns the amount's value function, counting its calls in
   * {@code reads[0]}.
   */
  private ValueOf insertDense(int[] reads) {
    for (int i = 0; i < DENSE; i++) {
      insert(3L * i, BigDecimal.valueOf(i % 1_000), null);
    }
    return event -> {
      reads[0]++;
      return AMOUNT.of(event);
    };
  }

  /**
   * 100 000 events 3 ms apart: slices built for a reach of 20 s reach back the finest level's 255 slices (60.18 s at a
   * minute's lateness), built for 200 s three levels' (240.72 s), up to one more slice of their widest level, and
   * reading the events there is all that building them reads.
   */
  @Test
  void buildingReadsTheEventsWithinTheReachAndNoMore() {
    int[] reads = {0};
    ValueOf counting = insertDense(reads);
    long newest = 3L * (DENSE - 1);
    // reach asked for, the levels' reach, the widest level's slice
    for (long[] reach : new long[][] {{20_000, 60_180, 236}, {200_000, 240_720, 944}}) {
      reads[0] = 0;
      TimeSlices slices = new TimeSlices(log, 60_000, reach[0], newest, counting, TimeSlices.SUM);
      String what = "built for " + reach[0] + " ms: read " + reads[0] + " events";
      assertTrue(reads[0] >= reach[1] / 3 && reads[0] <= (reach[1] + reach[2]) / 3 + 1, what);
      assertTrue(slices.reaches(newest - reach[1]), what);
      assertFalse(slices.reaches(newest - reach[1] - reach[2] - 1), what);
      long fromMs = newest - reach[1];
      assertFolded(bruteForce(fromMs, newest, TimeSlices.SUM), slices.fold(log, fromMs, newest), "from " + fromMs);
    }
  }

  /**
   * 100 000 events 3 ms apart, the sum over all but the last 60 s and over the 30 s before the last 30 s reads a few
   * hundred of them.
   */
  @Test
  void aRangeReadsTheEventsOfTheSlicesAtItsEndsOnly() {
    int[] reads = {0};
    ValueOf counting = insertDense(reads);
    long newest = 3L * (DENSE - 1);
    TimeSlices slices = new TimeSlices(log, 60_000, 660_000, newest, counting, TimeSlices.SUM);
    for (long[] range : new long[][] {{0, newest - 60_000}, {newest - 60_000, newest - 30_000}}) {
      reads[0] = 0;
      TimeSlices.Folded folded = slices.fold(log, range[0], range[1]);
      assertFolded(bruteForce(range[0], range[1], TimeSlices.SUM), folded, range[0] + ", " + range[1]);
      assertTrue(reads[0] < 1_000, "read " + reads[0] + " events");
    }
  }
}
