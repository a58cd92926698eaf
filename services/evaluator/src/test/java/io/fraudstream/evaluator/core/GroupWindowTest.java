package io.fraudstream.evaluator.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigDecimal;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class GroupWindowTest {
  private static final List<String> FIELDS = List.of("amount");

  private static StoredEvent insert(GroupWindow window, long timeMs, long ingestTsMs, Object... values) {
    return window.insert(timeMs, ingestTsMs, 0, ingestTsMs, 1, values);
  }

  private static List<Long> times(GroupWindow window) {
    return window.events().stream().map(StoredEvent::eventTimeMs).toList();
  }

  private static List<Long> ids(List<StoredEvent> events) {
    return events.stream().map(StoredEvent::id).toList();
  }

  @Test
  void eventsAreKeptByEventTimeThenInsertionOrder() {
    GroupWindow window = new GroupWindow(FIELDS);
    assertNull(window.maxEventTimeMs());
    assertNull(window.maxIngestTsMs());
    insert(window, 300, 10, "a");
    insert(window, 100, 11, "b");
    insert(window, 300, 12, "c");
    insert(window, 200, 9, "d");
    assertEquals(List.of(100L, 200L, 300L, 300L), times(window));
    assertEquals(List.of(1L, 3L, 0L, 2L), ids(window.events()));
    assertEquals(300L, window.maxEventTimeMs());
    assertEquals(12L, window.maxIngestTsMs(), "the largest ingestion timestamp, not the last");
    assertEquals(4, window.nextEventId());
    assertEquals(4, window.size());
  }

  @Test
  void theFloorEvictsAndThePersistenceHooksReportEachChangeOnce() {
    GroupWindow window = new GroupWindow(FIELDS);
    insert(window, 100, 1, "a");
    insert(window, 200, 2, "b");
    assertEquals(List.of(0L, 1L), ids(window.takeJournal()));
    assertEquals(List.of(), window.takeJournal());
    insert(window, 300, 3, "c");
    insert(window, 150, 4, "d");
    window.setFloor(160);
    assertEquals(160L, window.floorMs());
    assertEquals(List.of(200L, 300L), times(window));
    // Event 3 (at 150) was inserted and evicted since the last take: neither journaled nor reported evicted, as it
    // has no row to write or remove.
    assertEquals(List.of(2L), ids(window.takeJournal()));
    assertEquals(List.of(0L), window.takeEvicted());
    assertEquals(List.of(), window.takeEvicted());
    assertEquals(1L, window.minLiveId());
    window.setFloor(50);
    assertEquals(List.of(200L, 300L), times(window), "a floor that moves down brings nothing back");
    window.setFloor(1_000);
    assertEquals(0, window.size());
    assertEquals(window.nextEventId(), window.minLiveId(), "no live event: the next id");
    assertEquals(List.of(1L, 2L), window.takeEvicted());
    StoredEvent stored = new StoredEvent(7, 400, 5, 0, 5, 1, List.of("e"));
    GroupWindow restored = GroupWindow.restore(FIELDS, List.of(stored), 400L, null, 8, 5L, Map.of());
    insert(restored, 500, 6, "f");
    restored.setFloor(1_000);
    assertEquals(List.of(7L), restored.takeEvicted(), "a restored event has a row; event 8, never journaled, none");
  }

  @Test
  void anEventEvictedBeforeItWasWrittenStaysOutOfTheJournalWhenTheFloorMovesDown() {
    GroupWindow window = new GroupWindow(FIELDS);
    insert(window, 100, 1, "a");
    window.takeJournal();
    insert(window, 50, 2, "late"); // id 1: evaluated, then evicted before any write
    window.setFloor(80);
    window.setFloor(10); // a rule change widened the window before the write
    insert(window, 120, 3, "c"); // id 2
    assertEquals(List.of(2L), ids(window.takeJournal()), "the evicted event is not written back");
    assertEquals(List.of(), window.takeEvicted(), "nor removed: it has no row");
    assertEquals(List.of(100L, 120L), times(window));
  }

  @Test
  void aNewProjectionRewritesEveryLiveEvent() {
    GroupWindow window = new GroupWindow(List.of("a", "b"));
    insert(window, 100, 1, "a1", "b1");
    window.takeJournal();
    assertFalse(window.takeReprojected());
    window.prepare(List.of("b", "c"), Map.of());
    assertTrue(window.takeReprojected());
    assertFalse(window.takeReprojected());
    assertEquals(List.of("b", "c"), window.fieldNames());
    assertEquals(List.of("b1", Missing.MISSING), window.events().get(0).values());
    assertEquals(List.of(), window.takeJournal(), "after a reprojection every live event is rewritten anyway");
  }

  @Test
  void restoreSortsAndDropsWhatIsBelowTheFloor() {
    List<StoredEvent> stored =
        List.of(
            new StoredEvent(5, 300, 30, 0, 5, 1, List.of("x")),
            new StoredEvent(2, 100, 10, 0, 2, 1, List.of("y")),
            new StoredEvent(4, 300, 20, 0, 4, 1, List.of("z")),
            new StoredEvent(3, 200, 25, 0, 3, 1, List.of("w")));
    GroupWindow window = GroupWindow.restore(FIELDS, stored, 300L, 150L, 6, 30L, Map.of());
    assertEquals(List.of(3L, 4L, 5L), ids(window.events()));
    assertEquals(300L, window.maxEventTimeMs());
    assertEquals(150L, window.floorMs());
    assertEquals(6, window.nextEventId());
    assertEquals(30L, window.maxIngestTsMs());
    assertEquals(3L, window.minLiveId());
    assertEquals(List.of(), window.takeJournal());
    assertEquals(List.of(), window.takeEvicted());
    assertFalse(window.takeReprojected());
    assertEquals(6, insert(window, 400, 40, "v").id(), "ids continue from the head's counter");
  }

  @Test
  void indicesSurviveCompactionOfManyEvictedEvents() {
    GroupWindow window = oneRule("sum", WindowSpec.Kind.SUM_COUNT, 1_000, 0);
    for (long t = 0; t < 2_000; t++) {
      insert(window, t * 10, t, BigDecimal.ONE);
      WindowAggregate aggregate = window.aggregate("sum", t * 10);
      assertEquals(Math.min(t + 1, 101), aggregate.count(), "events in [t - 1000, t] at t = " + t * 10);
      window.setFloor(t * 10 - 1_000);
    }
    assertEquals(101, window.size());
    assertEquals(List.of(19_990L), times(window).subList(100, 101));
    assertEquals(1_899L, window.minLiveId());
    assertEquals(window.size(), window.endIndex() - window.indexAtOrAfter(Long.MIN_VALUE));
  }

  /** A window with one rule, {@code slot}, aggregating amounts over {@code windowMs} with {@code latenessMs}. */
  private static GroupWindow oneRule(String slot, WindowSpec.Kind kind, long windowMs, long latenessMs) {
    GroupWindow window = new GroupWindow(FIELDS);
    WindowSpec.Key key = new WindowSpec.Key("uid", 0, 0, FIELDS, null);
    ValueOf amount = event -> event.amount(0);
    window.prepare(FIELDS, Map.of(slot, new WindowSpec(key, kind, windowMs, latenessMs, amount)));
    return window;
  }

  /** A window summing amounts over {@code windowMs} with {@code latenessMs}, its events written to {@code stored}. */
  private static GroupWindow summing(long windowMs, long latenessMs, Map<Long, StoredEvent> stored, int[] loads) {
    GroupWindow window = oneRule("sum", WindowSpec.Kind.SUM_COUNT, windowMs, latenessMs);
    window.attachPager(
        id -> {
          loads[0]++;
          return stored.get(id);
        });
    return window;
  }

  private static void write(GroupWindow window, Map<Long, StoredEvent> stored) {
    window.takeJournal().forEach(event -> stored.put(event.id(), event));
    window.takeEvicted().forEach(stored::remove);
  }

  @Test
  void heapBytesChargesEveryValueAMinWindowHolds() {
    GroupWindow window = oneRule("min", WindowSpec.Kind.MIN, 100_000, 0);
    insert(window, 0, 0, BigDecimal.valueOf(1_000));
    long one = window.heapBytes() - window.indexBytes();
    long events = 0;
    for (int i = 1; i < 100; i++) {
      // rising: each is the minimum of what follows it
      events += insert(window, i * 100L, i, BigDecimal.valueOf(1_000 + i)).heapBytes();
    }
    // 99 candidates in the settled deque (buffers grown from 4 slots to 128) and the newest in the tail
    long deque = 99 * HeapSizes.decimal() + (128 - 4) * (8 + 4);
    assertEquals(one + events + deque, window.heapBytes() - window.indexBytes());
  }

  @Test
  void aStringEveryEventRepeatsIsHeldAndChargedOnceAWindowInsertedOrReadBack() {
    List<String> fields = List.of("payerId", "amount");
    GroupWindow window = new GroupWindow(fields);
    Map<Long, StoredEvent> stored = new HashMap<>();
    window.attachPager(stored::get);
    List<StoredEvent> inserted = new java.util.ArrayList<>();
    for (int i = 0; i < 3; i++) {
      inserted.add(insert(window, i * 100L, i, new String("payer-1"), BigDecimal.valueOf(i)));
    }
    Object key = inserted.get(0).value(0);
    long alone = new StoredEvent(0, 0, 0, 0, 0, 1, List.of("payer-1", BigDecimal.ONE)).heapBytes();
    for (StoredEvent event : inserted) {
      assertSame(key, event.value(0));
      assertEquals(alone - HeapSizes.value("payer-1"), event.heapBytes(), "the key's string is the window's");
    }
    long charged = window.heapBytes();
    // Stored rows are decoded into copies of their strings: read back, the events share the window's again.
    window.takeJournal().forEach(event -> stored.put(event.id(), EventCodec.decode(EventCodec.encode(event))));
    window.pageOut(true);
    assertEquals(0, window.decodedCount());
    for (StoredEvent event : window.events()) {
      assertSame(key, event.value(0));
    }
    assertEquals(charged, window.heapBytes());
  }

  @Test
  void theIndexIsChargedAsItsArraysAreAllocated() {
    GroupWindow window = new GroupWindow(FIELDS);
    // Empty: times, ids and live ids of 8 slots each (16 + 64 B), and as many list slots (16 + 32 B).
    assertEquals(3 * 80 + 48, window.indexBytes());
    for (int i = 0; i < 1_000; i++) {
      insert(window, i * 100L, i, BigDecimal.valueOf(i));
    }
    // 1 000 events: the arrays doubled to 1 024 slots (16 + 8 192 B each, and 16 + 4 096 B for the list's).
    assertEquals(3 * 8_208 + 4_112, window.indexBytes());
    // Evicting 900 events compacts them away, which shrinks neither the times, the ids nor the list; the live-id heap
    // halves whenever it is under a quarter full, down to 256 slots (16 + 2 048 B) for the 100 left.
    window.setFloor(90_000);
    assertEquals(100, window.size());
    assertEquals(2 * 8_208 + 2_064 + 4_112, window.indexBytes());
  }

  @Test
  void pageOutKeepsTheTailAndTheEventsAfterEachCursorAndReadsTheRestBackInPages() {
    Map<Long, StoredEvent> stored = new HashMap<>();
    int[] loads = {0};
    GroupWindow window = summing(100_000, 1_000, stored, loads);
    for (int i = 0; i < 1_000; i++) {
      insert(window, i * 100L, i, BigDecimal.valueOf(i));
    }
    write(window, stored);
    long before = window.heapBytes();
    long perEvent = window.events().get(0).heapBytes(); // each holds one small decimal
    window.pageOut(false);
    // The sum's cursor is the window's far edge (event 0): PAGE events from there, and the 11 events of the last
    // second (the lateness) stay decoded.
    assertEquals(GroupWindow.PAGE + 11, window.decodedCount());
    assertEquals(before - (1_000 - GroupWindow.PAGE - 11) * perEvent, window.heapBytes());
    for (int i = 1_000; i < 3_000; i++) {
      insert(window, i * 100L, i, BigDecimal.valueOf(i));
      long first = Math.max(0, i - 1_000);
      WindowAggregate aggregate = window.aggregate("sum", i * 100L);
      assertEquals(i - first + 1, aggregate.count(), "members of [t - 100 s, t] at event " + i);
      assertEquals(BigDecimal.valueOf((first + i) * (i - first + 1) / 2), aggregate.total());
      window.setFloor(i * 100L - 101_000);
      write(window, stored);
      window.pageOut(false);
      assertTrue(window.decodedCount() <= 2 * GroupWindow.PAGE + 11, "decoded at event " + i);
    }
    // Each event left the window once, read back a page at a time: about one load per event that left.
    assertTrue(loads[0] <= 2_000 + GroupWindow.PAGE, "loads: " + loads[0]);
    window.pageOut(true);
    assertEquals(0, window.decodedCount());
    assertEquals(window.size(), window.events().size(), "every live event read back");
    assertEquals(List.of(1_989L, 1_990L), ids(window.events()).subList(0, 2), "the floor, 101 s behind");
  }

  @Test
  void aWindowWithUnwrittenEventsOrNoPagerKeepsEverythingDecoded() {
    GroupWindow unpaged = new GroupWindow(FIELDS);
    insert(unpaged, 100, 1, BigDecimal.ONE);
    unpaged.takeJournal();
    unpaged.pageOut(true);
    assertEquals(1, unpaged.decodedCount(), "no pager: nothing to read back from");
    Map<Long, StoredEvent> stored = new HashMap<>();
    GroupWindow window = summing(1_000, 0, stored, new int[1]);
    insert(window, 100, 1, BigDecimal.ONE);
    window.pageOut(true);
    assertEquals(1, window.decodedCount(), "an event not yet written stays");
    write(window, stored);
    window.pageOut(true);
    assertEquals(0, window.decodedCount());
  }

  @Test
  void anEventWhoseStoredCopyIsGoneIsCorruptState() {
    Map<Long, StoredEvent> stored = new HashMap<>();
    GroupWindow window = summing(1_000, 0, stored, new int[1]);
    insert(window, 100, 1, BigDecimal.ONE);
    write(window, stored);
    window.pageOut(true);
    stored.clear();
    assertThrows(CorruptStateException.class, window::events);
  }
}
