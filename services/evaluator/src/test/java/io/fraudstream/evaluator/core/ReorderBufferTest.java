package io.fraudstream.evaluator.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.Comparator;
import java.util.List;
import org.junit.jupiter.api.Test;

class ReorderBufferTest {
  /** Items are their ingestion timestamps; equal timestamps keep arrival order. */
  private static ReorderBuffer<Integer> buffer(long waitMs) {
    return new ReorderBuffer<>(waitMs, Comparator.<Integer>naturalOrder());
  }

  @Test
  void withoutAWaitEveryItemLeavesAtOnce() {
    ReorderBuffer<Integer> buffer = buffer(0);
    buffer.add(200, 1_000);
    assertEquals(List.of(200), buffer.release(1_000));
    buffer.add(100, 1_001);
    assertEquals(List.of(100), buffer.release(1_001));
    assertEquals(0, buffer.size());
    assertNull(buffer.nextDueMs());
  }

  @Test
  void itemsArrivingOutOfOrderWithinTheWaitLeaveInOrder() {
    ReorderBuffer<Integer> buffer = buffer(500);
    buffer.add(200, 1_000);
    assertEquals(List.of(), buffer.release(1_000));
    buffer.add(100, 1_300);
    assertEquals(List.of(), buffer.release(1_499));
    assertEquals(2, buffer.size());
    assertEquals(1_500L, buffer.nextDueMs());
    // 200 is due; 100 precedes it, so it leaves with it although it is not due yet.
    assertEquals(List.of(100, 200), buffer.release(1_500));
    assertEquals(0, buffer.size());
    assertNull(buffer.nextDueMs(), "an item released early is not due again");
    assertEquals(List.of(), buffer.release(1_800));
  }

  @Test
  void anItemLaterThanTheWaitLeavesAfterThoseItShouldHavePreceded() {
    ReorderBuffer<Integer> buffer = buffer(500);
    buffer.add(200, 1_000);
    assertEquals(List.of(200), buffer.release(1_500));
    buffer.add(100, 1_600);
    assertEquals(List.of(), buffer.release(1_600));
    assertEquals(List.of(100), buffer.release(2_100));
  }

  @Test
  void dueItemsReleaseOnlyWhatPrecedesTheLastOfThem() {
    ReorderBuffer<Integer> buffer = buffer(500);
    buffer.add(300, 1_000);
    buffer.add(100, 1_100);
    buffer.add(400, 1_200);
    buffer.add(200, 1_300);
    // At 1 500 only 300 is due: 100 and 200 precede it, 400 does not.
    assertEquals(List.of(100, 200, 300), buffer.release(1_500));
    assertEquals(1, buffer.size());
    assertEquals(1_700L, buffer.nextDueMs(), "the next due item is 400, arrived at 1 200");
    assertEquals(List.of(400), buffer.release(1_700));
  }

  @Test
  void equalItemsLeaveInArrivalOrder() {
    ReorderBuffer<int[]> buffer = new ReorderBuffer<>(100, Comparator.comparingInt(item -> item[0]));
    int[] first = {5, 1};
    int[] second = {5, 2};
    buffer.add(first, 0);
    buffer.add(second, 10);
    List<int[]> released = buffer.release(110);
    assertEquals(2, released.size());
    assertEquals(1, released.get(0)[1]);
    assertEquals(2, released.get(1)[1]);
  }

  @Test
  void aNegativeWaitIsRefused() {
    assertThrows(IllegalArgumentException.class, () -> buffer(-1));
  }
}
