package io.fraudstream.evaluator.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigDecimal;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class GroupWindowTest {
  private static final List<String> FIELDS = List.of("amount");

  private static StoredEvent insert(GroupWindow window, long timeMs, long ingestTsMs, Object... values) {
    return window.insert(timeMs, ingestTsMs, 0, ingestTsMs, 1, Arrays.asList(values));
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
    // Event 3 (at 150) was inserted and evicted since the last take: it is evicted, but not journaled.
    assertEquals(List.of(2L), ids(window.takeJournal()));
    assertEquals(List.of(0L, 3L), window.takeEvicted());
    assertEquals(List.of(), window.takeEvicted());
    assertEquals(1L, window.minLiveId());
    window.setFloor(50);
    assertEquals(List.of(200L, 300L), times(window), "a floor that moves down brings nothing back");
    window.setFloor(1_000);
    assertEquals(0, window.size());
    assertEquals(window.nextEventId(), window.minLiveId(), "no live event: the next id");
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
    GroupWindow window = new GroupWindow(FIELDS);
    WindowSpec.Key key = new WindowSpec.Key("uid", 0, 0, FIELDS, null);
    ValueOf amount = event -> event.amounts().get(0);
    window.prepare(FIELDS, Map.of("sum", new WindowSpec(key, WindowSpec.Kind.SUM_COUNT, 1_000, 0, amount)));
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
}
