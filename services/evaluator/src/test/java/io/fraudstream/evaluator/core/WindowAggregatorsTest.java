package io.fraudstream.evaluator.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * SumCountWindow and ExtremeWindow (through the GroupWindow they are told of insertions by), against a brute-force
 * aggregate of the live events in {@code [t - windowMs, t]}: in-order insertions, insertions within the lateness,
 * insertions deep behind it but within the window, and insertions before the window, with the group's floor moved as
 * the engine moves it and events that are not members of the rule's window.
 */
class WindowAggregatorsTest {
  private static final long WINDOW_MS = 10_000;
  private static final long LATENESS_MS = 1_000;
  private static final List<String> FIELDS = List.of("amount");
  /** A member's value is its amount; an event without one (JSON null here) is not a member. */
  private static final ValueOf AMOUNT = event -> event.amount(0);

  private record Inserted(long timeMs, BigDecimal value) {}

  /** The group window of one rule, with the inserted events kept for the brute force. */
  private static final class Subject {
    GroupWindow window = new GroupWindow(FIELDS);
    final WindowSpec.Kind kind;
    final long windowMs;
    final long latenessMs;
    final ValueOf valueOf;
    final List<Inserted> inserted = new ArrayList<>();
    long ingestTsMs;

    Subject(WindowSpec.Kind kind) {
      this(kind, WINDOW_MS, LATENESS_MS, AMOUNT);
    }

    Subject(WindowSpec.Kind kind, long windowMs, long latenessMs, ValueOf valueOf) {
      this.kind = kind;
      this.windowMs = windowMs;
      this.latenessMs = latenessMs;
      this.valueOf = valueOf;
      window.prepare(FIELDS, specs());
    }

    Map<String, WindowSpec> specs() {
      WindowSpec.Key key = new WindowSpec.Key("uid", 0, 0, FIELDS, null);
      return Map.of("rule", new WindowSpec(key, kind, windowMs, latenessMs, valueOf));
    }

    /** Inserts as the engine does, without querying. */
    void add(long timeMs, BigDecimal value) {
      window.insert(timeMs, ++ingestTsMs, 0, ingestTsMs, 1, new Object[] {value});
      inserted.add(new Inserted(timeMs, value));
    }

    /** Inserts as the engine does; returns the aggregate the rule sees for the inserted event. */
    WindowAggregate insert(long timeMs, BigDecimal value) {
      add(timeMs, value);
      return window.aggregate("rule", timeMs);
    }

    void floorAfterInsertion() {
      window.setFloor(window.maxEventTimeMs() - (windowMs + latenessMs));
    }

    /**
     * Writes the window's changes to {@code stored} and goes on with the window resumed from its snapshot, every
     * event paged out, read back from {@code stored}; checks that the resumed window's snapshot is the same.
     */
    void resumeFromSnapshot(Map<Long, StoredEvent> stored) {
      window.takeJournal().forEach(event -> stored.put(event.id(), event));
      window.takeEvicted().forEach(stored::remove);
      GroupWindow.Snapshot snapshot = window.snapshot();
      GroupWindow resumed =
          GroupWindow.resume(EventCodec.decodeHead(EventCodec.encodeHead(window)), snapshot, Map.of());
      resumed.attachPager(stored::get);
      assertEquals(snapshot, resumed.snapshot(), "a resumed window's snapshot before its aggregator is");
      resumed.prepare(FIELDS, specs());
      assertEquals(0, resumed.decodedCount(), "resumed without reading an event");
      assertEquals(snapshot, resumed.snapshot(), "a resumed window's snapshot");
      window = resumed;
    }

    /** The aggregate of the live members in {@code [t - windowMs, t]}, by brute force. */
    WindowAggregate expected(long timeMs) {
      Long floorMs = window.floorMs();
      BigDecimal total = BigDecimal.ZERO;
      long count = 0;
      BigDecimal extreme = null;
      for (Inserted event : inserted) {
        boolean live = floorMs == null || event.timeMs() >= floorMs;
        if (!live || event.value() == null || event.timeMs() < timeMs - windowMs || event.timeMs() > timeMs) {
          continue;
        }
        total = total.add(event.value());
        count++;
        int order = extreme == null ? 0 : event.value().compareTo(extreme);
        if (extreme == null || (kind == WindowSpec.Kind.MIN ? order < 0 : order > 0)) {
          extreme = event.value();
        }
      }
      return kind == WindowSpec.Kind.SUM_COUNT
          ? new WindowAggregate(total, count, null)
          : new WindowAggregate(BigDecimal.ZERO, 0, extreme);
    }
  }

  private static void assertAggregate(WindowAggregate expected, WindowAggregate actual, String what) {
    assertEquals(0, expected.total().compareTo(actual.total()), () -> what + ": total " + actual.total());
    assertEquals(expected.count(), actual.count(), () -> what + ": count");
    if (expected.extreme() == null) {
      assertNull(actual.extreme(), what);
    } else {
      assertEquals(0, expected.extreme().compareTo(actual.extreme()), () -> what + ": extreme " + actual.extreme());
    }
  }

  private static BigDecimal amount(long value) {
    return BigDecimal.valueOf(value);
  }

  @ParameterizedTest
  @EnumSource(WindowSpec.Kind.class)
  void inOrderInsertionsSlideTheWindow(WindowSpec.Kind kind) {
    Subject subject = new Subject(kind);
    long[][] events = {{0, 5}, {4_000, 3}, {9_999, 8}, {10_000, 1}, {10_001, 7}, {25_000, 2}, {25_000, 9}};
    for (long[] event : events) {
      WindowAggregate actual = subject.insert(event[0], amount(event[1]));
      assertAggregate(subject.expected(event[0]), actual, "event at " + event[0]);
      subject.floorAfterInsertion();
    }
  }

  @ParameterizedTest
  @EnumSource(WindowSpec.Kind.class)
  void outOfOrderInsertionsWithinAndDeepBehindTheLateness(WindowSpec.Kind kind) {
    Subject subject = new Subject(kind);
    for (long t = 0; t <= 20_000; t += 2_000) {
      subject.insert(t, amount(t / 1_000 % 7));
      subject.floorAfterInsertion();
    }
    // M = 20 000: within the lateness (>= 19 000), deep behind it (< 19 000) but within the window (>= 10 000), at
    // the window's edge, below it but above the floor (9 000), and an extreme that only a deep scan can find.
    long[][] late = {{19_500, 1}, {15_000, -4}, {10_000, 11}, {9_500, 100}, {12_345, -50}, {18_999, 6}, {20_000, 0}};
    for (long[] event : late) {
      WindowAggregate actual = subject.insert(event[0], amount(event[1]));
      assertAggregate(subject.expected(event[0]), actual, "late event at " + event[0]);
      subject.floorAfterInsertion();
    }
    // In-order insertions after them still see every out-of-order member that remains in the window.
    for (long t = 21_000; t <= 32_000; t += 1_000) {
      WindowAggregate actual = subject.insert(t, amount(t % 5));
      assertAggregate(subject.expected(t), actual, "event at " + t);
      subject.floorAfterInsertion();
    }
  }

  @ParameterizedTest
  @EnumSource(WindowSpec.Kind.class)
  void eventsThatAreNotMembersCountForNothing(WindowSpec.Kind kind) {
    Subject subject = new Subject(kind);
    subject.insert(1_000, amount(4));
    WindowAggregate actual = subject.insert(2_000, null);
    assertAggregate(subject.expected(2_000), actual, "after a non-member");
    actual = subject.insert(1_500, null);
    assertAggregate(subject.expected(1_500), actual, "after an out-of-order non-member");
  }

  /**
   * Sparse arrivals (up to 300 ms apart in order), then dense ones (under 8 ms apart: queries behind the newest fold
   * time slices, and 12 s of event time fill the window, so that events leave it).
   */
  @ParameterizedTest
  @EnumSource(WindowSpec.Kind.class)
  void randomArrivalsAgreeWithTheBruteForce(WindowSpec.Kind kind) {
    randomArrivals(kind, 3_000, 300, null);
    randomArrivals(kind, 6_000, 8, null);
  }

  @ParameterizedTest
  @EnumSource(WindowSpec.Kind.class)
  void randomArrivalsAgreeWithTheBruteForceWhenTheWindowIsResumedFromItsSnapshotAfterEach(WindowSpec.Kind kind) {
    randomArrivals(kind, 1_000, 300, new HashMap<>());
    randomArrivals(kind, 3_000, 8, new HashMap<>());
  }

  /**
   * {@code count} random arrivals, in order (up to {@code stepMs} after the newest), within the lateness and deep
   * behind it, each checked against the brute force; with {@code stored}, the window is written there and resumed
   * from its snapshot after each.
   */
  private static void randomArrivals(WindowSpec.Kind kind, int count, int stepMs, Map<Long, StoredEvent> stored) {
    Random random = new Random(kind.ordinal() * 7919L + 17);
    Subject subject = new Subject(kind);
    long maxMs = 0;
    for (int i = 0; i < count; i++) {
      long timeMs;
      int shape = random.nextInt(10);
      if (shape < 5) {
        timeMs = maxMs + random.nextInt(stepMs);
      } else if (shape < 7) {
        timeMs = maxMs - random.nextInt((int) LATENESS_MS);
      } else {
        timeMs = maxMs - random.nextInt((int) (WINDOW_MS + LATENESS_MS));
      }
      timeMs = Math.max(0, timeMs);
      Long floorMs = subject.window.floorMs();
      if (floorMs != null && timeMs < floorMs) {
        continue; // late for the group: the engine does not insert it
      }
      BigDecimal value = random.nextInt(8) == 0 ? null : amount(random.nextInt(2_000) - 1_000);
      WindowAggregate actual = subject.insert(timeMs, value);
      assertAggregate(subject.expected(timeMs), actual, "insertion " + i + " at " + timeMs);
      subject.floorAfterInsertion();
      maxMs = Math.max(maxMs, timeMs);
      if (stored != null) {
        subject.resumeFromSnapshot(stored);
      }
    }
  }

  @ParameterizedTest
  @EnumSource(WindowSpec.Kind.class)
  void anAggregatorBuiltOverARestoredWindowAgreesWithOneToldOfEveryInsertion(WindowSpec.Kind kind) {
    Subject live = new Subject(kind);
    for (long t : new long[] {0, 3_000, 6_000, 2_000, 9_000, 12_000, 8_500}) {
      live.insert(t, amount(t % 11 - 5));
      live.floorAfterInsertion();
    }
    GroupWindow window = live.window;
    GroupWindow restored =
        GroupWindow.restore(
            FIELDS, window.events(), window.maxEventTimeMs(), window.floorMs(), window.nextEventId(), 0L, Map.of());
    restored.prepare(FIELDS, live.specs());
    restored.insert(11_000, 99, 0, 99, 1, new Object[] {amount(3)});
    WindowAggregate expected = live.insert(11_000, amount(3));
    assertAggregate(expected, restored.aggregate("rule", 11_000), "restored");
  }

  /**
   * A rule of {@code kind} over {@code windowMs} with a minute's lateness that counts the events it reads in {@code
   * reads[0]}.
   */
  private static Subject countingReads(WindowSpec.Kind kind, long windowMs, int[] reads) {
    ValueOf counting =
        event -> {
          reads[0]++;
          return AMOUNT.of(event);
        };
    return new Subject(kind, windowMs, 60_000, counting);
  }

  /**
   * The extreme's value recurs (a round amount, every 10th event, the newest too) in a tail of 1 000 events; an event
   * 5 ms behind the newest finds its first occurrence in the tail and reads no stored values to answer, where keeping
   * the latest occurrence would scan the lateness.
   */
  @ParameterizedTest
  @EnumSource(
      value = WindowSpec.Kind.class,
      names = {"MIN", "MAX"})
  void aRepeatedExtremeSparesAQueryBehindTheNewestItsScan(WindowSpec.Kind kind) {
    int[] reads = {0};
    Subject subject = countingReads(kind, 300_000, reads);
    BigDecimal extreme = amount(kind == WindowSpec.Kind.MIN ? 0 : 1_000);
    for (int i = 0; i < 1_000; i++) {
      subject.add(10_000 + 50L * i, i % 10 == 9 ? extreme : amount(500 + i % 7));
    }
    long newest = 10_000 + 50L * 999;
    subject.add(newest - 5, amount(600));
    reads[0] = 0;
    assertEquals(0, extreme.compareTo(subject.window.aggregate("rule", newest - 5).extreme()));
    assertEquals(0, reads[0]);
  }

  /**
   * A rule of {@code kind} over {@code windowMs} (a minute's lateness) counting its reads in {@code reads[0]}, told of
   * {@code events} events 3 ms apart from 0, each the extreme of its window so far (the newest is the extreme).
   */
  private static Subject denseTowardsTheExtreme(WindowSpec.Kind kind, long windowMs, int events, int[] reads) {
    Subject subject = countingReads(kind, windowMs, reads);
    for (int i = 0; i < events; i++) {
      subject.add(3L * i, amount(kind == WindowSpec.Kind.MIN ? events - i : i)); // SUM_COUNT: any
    }
    return subject;
  }

  /**
   * Inserts an event {@code behindMs} behind the newest at {@code newestMs}, not the extreme of its window, and checks
   * its query against the brute force; returns the events the query read.
   */
  private static int queryBehind(Subject subject, long newestMs, long behindMs, int[] reads) {
    long timeMs = newestMs - behindMs + 1;
    subject.add(timeMs, amount(subject.kind == WindowSpec.Kind.MIN ? 1_000_000_000 : 0));
    reads[0] = 0;
    WindowAggregate actual = subject.window.aggregate("rule", timeMs);
    int read = reads[0];
    assertAggregate(subject.expected(timeMs), actual, behindMs + " ms behind");
    return read;
  }

  /**
   * 20 000 events 3 ms apart, the extreme the newest (the lateness holds all of the last 60 s): once a first query
   * behind the newest has built the slices, a query 30 s behind reads the events of a few slices at its range's ends
   * (each 236 ms at the finest), not the 10 000 after it, and agrees with the brute force.
   */
  @ParameterizedTest
  @EnumSource(WindowSpec.Kind.class)
  void aQueryFarBehindTheNewestReadsTwoSlicesNotEveryEventAfterIt(WindowSpec.Kind kind) {
    int[] reads = {0};
    Subject subject = denseTowardsTheExtreme(kind, 300_000, 20_000, reads);
    long newest = 3L * 19_999;
    queryBehind(subject, newest, 20_000, reads);
    int read = queryBehind(subject, newest, 30_000, reads);
    assertTrue(read <= 4 * 80, "read " + read + " events");
  }

  /**
   * 200 000 events 3 ms apart in a day's window, the extreme the newest. The first query 20 s behind the newest, which
   * would read more than {@link TimeSlices#WORTH_BUILDING} events, builds slices over the events it needs and no more
   * than the finest levels that reach twice as far, not over the 600 s in the window: SUM and COUNT need the 20 s after
   * it (one level, 60.18 s at a minute's lateness); MIN and MAX the lateness's events up to it (two levels, 120.36 s).
   * A query 300 s behind, further than they reach, builds them again, wider (the window's heap grows by a level's
   * slices at least), and agrees with the brute force too.
   */
  @ParameterizedTest
  @EnumSource(WindowSpec.Kind.class)
  void slicesAreBuiltOverTheEventsAQueryNeedsNotOverTheWindow(WindowSpec.Kind kind) {
    int[] reads = {0};
    Subject subject = denseTowardsTheExtreme(kind, 86_400_000, 200_000, reads);
    long newest = 3L * 199_999;
    boolean sum = kind == WindowSpec.Kind.SUM_COUNT;
    long levelsReachMs = sum ? 60_180 : 120_360;
    long widestSliceMs = sum ? 236 : 472;
    int read = queryBehind(subject, newest, 20_000, reads);
    // The build, then at most two of the finest slices at the range's ends (79 events each).
    assertTrue(read <= (levelsReachMs + widestSliceMs) / 3 + 2 * 80, "read " + read + " events");
    long heapBytes = subject.window.heapBytes();
    queryBehind(subject, newest, 300_000, reads);
    long grown = subject.window.heapBytes() - heapBytes;
    assertTrue(grown >= 76 * TimeSlices.SLOTS, "built again, wider: " + grown + " B more"); // a level's slices at least
  }

  /**
   * A SUM/COUNT query more than its window behind the newest reads the frontier's members and those of its own window
   * (the members between are both after it and left the frontier: they cancel out), and builds no slices when those
   * are few. 600 events 100 ms apart, a 10 s window: a query 55 s behind reads the 101 of the frontier and the 51 of
   * its window (its own event among them), not the 500 from its window's start to the frontier's, nor a build over the
   * 110 s it would reach back.
   */
  @Test
  void aQueryMoreThanAWindowBehindBuildsNoSlicesForTheEventsItDoesNotRead() {
    int[] reads = {0};
    Subject subject = countingReads(WindowSpec.Kind.SUM_COUNT, 10_000, reads);
    for (int i = 0; i < 600; i++) {
      subject.add(100L * i, amount(i));
    }
    int read = queryBehind(subject, 100L * 599, 55_000, reads);
    assertEquals(101 + 51, read, "events read");
  }

  @ParameterizedTest
  @EnumSource(WindowSpec.Kind.class)
  void aQueryBeforeAnyInsertionIsRefused(WindowSpec.Kind kind) {
    GroupWindow window = new Subject(kind).window;
    assertThrows(IllegalStateException.class, () -> window.aggregate("rule", 0));
  }
}
