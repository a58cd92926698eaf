package io.fraudstream.evaluator.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigDecimal;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/** GroupRows' snapshots: when a load resumes a window from one, and that it then reads no event. */
class GroupRowsTest {
  private static final String GROUP = "g";
  private static final List<String> FIELDS = List.of("amount");
  private static final WindowSpec.Key KEY = new WindowSpec.Key("uid", 0, 0, FIELDS, null);
  private static final Map<String, WindowSpec> SPECS =
      Map.of(
          "sum", new WindowSpec(KEY, WindowSpec.Kind.SUM_COUNT, 60_000, 1_000, event -> event.amount(0)),
          "max", new WindowSpec(KEY, WindowSpec.Kind.MAX, 60_000, 1_000, event -> event.amount(0)));

  private final TreeMap<String, byte[]> heads = new TreeMap<>();
  private final TreeMap<String, byte[]> events = new TreeMap<>();
  private final TreeMap<String, byte[]> buckets = new TreeMap<>();
  private int eventReads;
  private int snapshotReads;
  private final GroupRows rows =
      new GroupRows(
          table(heads),
          GroupRows.Table.of(
              key -> {
                boolean snapshot = key.equals(GroupRows.snapshotKey(GROUP));
                eventReads += snapshot ? 0 : 1;
                snapshotReads += snapshot ? 1 : 0;
                return events.get(key);
              },
              events::put,
              events::remove),
          table(buckets));

  private static GroupRows.Table table(Map<String, byte[]> map) {
    return GroupRows.Table.of(map::get, map::put, map::remove);
  }

  /** A window of {@code count} events a second apart from {@code fromMs}, written; amounts 1, 2, ... */
  private GroupWindow written(GroupWindow window, long fromMs, int count) {
    window.prepare(FIELDS, SPECS);
    for (int i = 0; i < count; i++) {
      long timeMs = fromMs + i * 1_000L;
      window.insert(timeMs, timeMs, 0, timeMs, 1, new Object[] {BigDecimal.valueOf(window.nextEventId() + 1)});
      window.setFloor(timeMs - 61_000);
    }
    rows.write(GROUP, window);
    return window;
  }

  private GroupWindow load() {
    eventReads = 0;
    snapshotReads = 0;
    GroupWindow window = rows.load(GROUP);
    window.prepare(FIELDS, SPECS);
    return window;
  }

  @Test
  void aWindowWithASnapshotOfItsHeadIsResumedWithoutReadingAnEvent() {
    GroupWindow window = written(new GroupWindow(FIELDS), 0, 100);
    assertTrue(rows.saveSnapshot(GROUP, window));
    GroupWindow loaded = load();
    assertTrue(loaded.resumed());
    assertEquals(0, eventReads, "no event row read");
    assertEquals(62, loaded.size(), "the live events: those of the last 61 seconds");
    assertEquals(window.aggregate("sum", 99_000), loaded.aggregate("sum", 99_000));
    assertEquals(window.aggregate("max", 99_000), loaded.aggregate("max", 99_000));
    // Its next event reads back a page from the sum's far edge, which it moves.
    written(loaded, 100_000, 1);
    assertTrue(eventReads <= GroupWindow.PAGE, "event rows read: " + eventReads);
    assertEquals(
        BigDecimal.valueOf((41 + 101) * 61 / 2), loaded.aggregate("sum", 100_000).total(), "amounts 41..101");
  }

  @Test
  void aSnapshotOfAnEarlierHeadIsNotUsed() {
    GroupWindow window = written(new GroupWindow(FIELDS), 0, 20);
    assertTrue(rows.saveSnapshot(GROUP, window));
    written(load(), 20_000, 1); // a later write: a new head
    GroupWindow loaded = load();
    assertFalse(loaded.resumed(), "read back from its events");
    assertEquals(21, eventReads);
    assertEquals(21, loaded.size());
    assertEquals(BigDecimal.valueOf(21 * 22 / 2), loaded.aggregate("sum", 20_000).total());
  }

  @Test
  void aCorruptSnapshotOnlyCostsAReadOfTheEvents() {
    GroupWindow window = written(new GroupWindow(FIELDS), 0, 20);
    assertTrue(rows.saveSnapshot(GROUP, window));
    events.put(GroupRows.snapshotKey(GROUP), new byte[] {1, 2, 3});
    GroupWindow loaded = load();
    assertFalse(loaded.resumed());
    assertEquals(window.aggregate("sum", 19_000), loaded.aggregate("sum", 19_000));
  }

  @Test
  void aSmallWindowOrOneWithUnwrittenChangesHasNoSnapshot() {
    GroupWindow small = written(new GroupWindow(FIELDS), 0, GroupRows.SNAPSHOT_MIN_EVENTS - 1);
    assertFalse(rows.saveSnapshot(GROUP, small));
    assertNull(events.get(GroupRows.snapshotKey(GROUP)));
    GroupWindow unwritten = written(new GroupWindow(FIELDS), 0, GroupRows.SNAPSHOT_MIN_EVENTS);
    unwritten.insert(9_000, 9_000, 0, 9_000, 1, new Object[] {BigDecimal.ONE});
    assertFalse(rows.saveSnapshot(GROUP, unwritten));
    assertNull(events.get(GroupRows.snapshotKey(GROUP)));
  }

  @Test
  void loadingAWindowOfFewerIdsThanASnapshotNeedsDoesNotLookForOne() {
    written(new GroupWindow(FIELDS), 0, GroupRows.SNAPSHOT_MIN_EVENTS - 1);
    GroupWindow small = load();
    assertEquals(0, snapshotReads);
    assertEquals(GroupRows.SNAPSHOT_MIN_EVENTS - 1, eventReads, "read from its events");
    assertEquals(GroupRows.SNAPSHOT_MIN_EVENTS - 1, small.size());
    written(small, 60_000, 1); // as many ids as a snapshot needs
    load();
    assertEquals(1, snapshotReads, "looked for, and none found");
  }

  @Test
  void deletingAGroupRemovesItsSnapshot() {
    GroupWindow window = written(new GroupWindow(FIELDS), 0, 20);
    assertTrue(rows.saveSnapshot(GROUP, window));
    rows.delete(GROUP);
    assertTrue(heads.isEmpty() && events.isEmpty() && buckets.isEmpty(), "no row left");
  }
}
