package io.fraudstream.evaluator.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.PriorityQueue;
import java.util.Random;
import org.junit.jupiter.api.Test;

class LongMinHeapTest {
  @Test
  void pollsInAscendingOrderLikeAPriorityQueue() {
    Random random = new Random(7);
    LongMinHeap heap = new LongMinHeap();
    PriorityQueue<Long> expected = new PriorityQueue<>();
    for (int step = 0; step < 20_000; step++) {
      if (expected.isEmpty() || random.nextInt(3) > 0) {
        long value = random.nextInt(1_000) - 500L;
        heap.add(value);
        expected.add(value);
      } else {
        assertEquals(expected.poll(), heap.poll());
      }
      assertEquals(expected.size(), heap.size());
      if (!expected.isEmpty()) {
        assertEquals(expected.peek(), heap.peek());
      }
    }
    while (!expected.isEmpty()) {
      assertEquals(expected.poll(), heap.poll());
    }
    assertEquals(true, heap.isEmpty());
  }

  @Test
  void anEmptyHeapHasNoMinimum() {
    assertThrows(IllegalStateException.class, new LongMinHeap()::peek);
    assertThrows(IllegalStateException.class, new LongMinHeap()::poll);
  }
}
