package io.fraudstream.evaluator.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigDecimal;
import java.util.ArrayDeque;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Random;
import org.junit.jupiter.api.Test;

class CandidateDequeTest {
  @Test
  void heapBytesChargesItsBuffersAsAllocatedAndADecimalPerCandidate() {
    CandidateDeque deque = new CandidateDeque();
    // 16 B of fields, buffers of 4 longs (16 + 32 B) and 4 references (16 + 16 B)
    assertEquals(32 + 48 + 32, deque.heapBytes());
    for (int i = 0; i < 5; i++) {
      deque.addLast(i, BigDecimal.ONE);
    }
    // grown to 8 slots each
    assertEquals(32 + 80 + 48 + 5 * HeapSizes.decimal(), deque.heapBytes());
    for (int i = 0; i < 5; i++) {
      deque.removeFirst();
    }
    assertEquals(32 + 80 + 48, deque.heapBytes(), "the buffers do not shrink");
  }

  @Test
  void behavesLikeAnArrayDequeOfPairsThroughWrapsAndGrowth() {
    Random random = new Random(11);
    CandidateDeque deque = new CandidateDeque();
    ArrayDeque<Map.Entry<Long, BigDecimal>> expected = new ArrayDeque<>();
    int largest = 0;
    for (int step = 0; step < 50_000; step++) {
      int op = random.nextInt(5);
      if (expected.isEmpty() || op < 2) {
        long time = random.nextInt(10_000);
        BigDecimal value = BigDecimal.valueOf(random.nextInt(1_000), 2);
        deque.addLast(time, value);
        expected.addLast(Map.entry(time, value));
      } else if (op == 2) {
        deque.removeFirst();
        expected.removeFirst();
      } else {
        deque.removeLast();
        expected.removeLast();
      }
      largest = Math.max(largest, expected.size());
      assertEquals(expected.size(), deque.size());
      assertEquals(expected.isEmpty(), deque.isEmpty());
      if (!expected.isEmpty()) {
        assertEquals(expected.peekFirst().getKey(), deque.firstTime());
        assertEquals(expected.peekFirst().getValue(), deque.firstValue());
        assertEquals(expected.peekLast().getKey(), deque.lastTime());
        assertEquals(expected.peekLast().getValue(), deque.lastValue());
      }
    }
    assertTrue(largest > 16, "the walk grew the buffers past their first lengths: " + largest);
  }

  @Test
  void anEmptyDequeHasNoEnds() {
    CandidateDeque deque = new CandidateDeque();
    assertThrows(NoSuchElementException.class, deque::firstTime);
    assertThrows(NoSuchElementException.class, deque::lastValue);
    assertThrows(NoSuchElementException.class, deque::removeFirst);
    assertThrows(NoSuchElementException.class, deque::removeLast);
  }
}
