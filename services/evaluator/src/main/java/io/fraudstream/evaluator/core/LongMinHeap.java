package io.fraudstream.evaluator.core;

import java.util.Arrays;

/** A binary min-heap of primitive longs (8 bytes an entry, no boxing). Not thread-safe. */
final class LongMinHeap {
  private long[] heap = new long[8];
  private int size;

  boolean isEmpty() {
    return size == 0;
  }

  int size() {
    return size;
  }

  /** The heap its array takes, growth room included. */
  long heapBytes() {
    return HeapSizes.longArray(heap.length);
  }

  void add(long value) {
    if (size == heap.length) {
      heap = Arrays.copyOf(heap, size * 2);
    }
    int i = size++;
    while (i > 0) {
      int parent = (i - 1) >>> 1;
      if (heap[parent] <= value) {
        break;
      }
      heap[i] = heap[parent];
      i = parent;
    }
    heap[i] = value;
  }

  /** The smallest value; the heap must not be empty. */
  long peek() {
    if (size == 0) {
      throw new IllegalStateException("empty heap");
    }
    return heap[0];
  }

  /** Removes and returns the smallest value; the heap must not be empty. */
  long poll() {
    long top = peek();
    long last = heap[--size];
    int i = 0;
    while (true) {
      int child = 2 * i + 1;
      if (child >= size) {
        break;
      }
      if (child + 1 < size && heap[child + 1] < heap[child]) {
        child++;
      }
      if (heap[child] >= last) {
        break;
      }
      heap[i] = heap[child];
      i = child;
    }
    if (size > 0) {
      heap[i] = last;
    }
    if (size < heap.length / 4 && heap.length > 8) {
      heap = Arrays.copyOf(heap, Math.max(8, heap.length / 2));
    }
    return top;
  }
}
