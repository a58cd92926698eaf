package io.fraudstream.evaluator.core;

import java.math.BigDecimal;
import java.util.NoSuchElementException;

/**
 * A double-ended queue of (time, value) candidates, held in two parallel ring buffers: a cached window's MIN/MAX
 * deques take a candidate on most insertions, and an object per candidate would be one more young object the window
 * keeps alive into the next collection. Not thread-safe.
 */
final class CandidateDeque {
  // times, values, head, size
  private static final long SHALLOW_BYTES = HeapSizes.object(4 + 4 + 4 + 4);
  private long[] times = new long[4];
  private BigDecimal[] values = new BigDecimal[4];
  private int head; // index of the first candidate
  private int size;

  /** The heap it holds: its buffers as allocated (they grow, never shrink) and a decimal per candidate. */
  long heapBytes() {
    return SHALLOW_BYTES
        + HeapSizes.longArray(times.length)
        + HeapSizes.referenceArray(values.length)
        + size * HeapSizes.decimal();
  }

  boolean isEmpty() {
    return size == 0;
  }

  int size() {
    return size;
  }

  private int slot(int position) {
    return (head + position) & (times.length - 1);
  }

  private void requireNonEmpty() {
    if (size == 0) {
      throw new NoSuchElementException("empty candidate deque");
    }
  }

  long firstTime() {
    requireNonEmpty();
    return times[head];
  }

  BigDecimal firstValue() {
    requireNonEmpty();
    return values[head];
  }

  long lastTime() {
    requireNonEmpty();
    return times[slot(size - 1)];
  }

  BigDecimal lastValue() {
    requireNonEmpty();
    return values[slot(size - 1)];
  }

  /** The time of the candidate at {@code position} (0 is the first). */
  long timeAt(int position) {
    return times[slot(position)];
  }

  /** The value of the candidate at {@code position} (0 is the first). */
  BigDecimal valueAt(int position) {
    return values[slot(position)];
  }

  void addLast(long timeMs, BigDecimal value) {
    if (size == times.length) {
      grow();
    }
    int last = slot(size);
    times[last] = timeMs;
    values[last] = value;
    size++;
  }

  void removeFirst() {
    requireNonEmpty();
    values[head] = null;
    head = slot(1);
    size--;
  }

  void removeLast() {
    requireNonEmpty();
    values[slot(size - 1)] = null;
    size--;
  }

  /** Doubles the buffers (their length stays a power of two), the first candidate moving to index 0. */
  private void grow() {
    long[] newTimes = new long[times.length * 2];
    BigDecimal[] newValues = new BigDecimal[times.length * 2];
    for (int i = 0; i < size; i++) {
      newTimes[i] = times[slot(i)];
      newValues[i] = values[slot(i)];
    }
    times = newTimes;
    values = newValues;
    head = 0;
  }
}
