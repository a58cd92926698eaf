package io.fraudstream.evaluator.core;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.PriorityQueue;
import java.util.Set;

/**
 * Holds arriving items for up to {@code waitMs} so that they leave in {@code order} (CONTRACT section 6,
 * {@code reorderWaitMs}, in the spirit of Kafka Streams' {@code max.task.idle.ms}).
 *
 * <p>Contract: an item is due once it has been held {@code waitMs}; every call to {@link #release} returns the due
 * items together with every held item that precedes the last of them in {@code order}, sorted by {@code order}. So
 * when items of different sources arrive out of order by no more than {@code waitMs}, they leave in order; an item
 * arriving later than that leaves as soon as it is due, after items it should have preceded. With {@code waitMs} 0
 * every item leaves at once. Pure: the caller passes the time; not thread-safe.
 */
public final class ReorderBuffer<T> {
  private record Held<T>(T item, long dueMs, long seq) {}

  private final long waitMs;
  private final Comparator<T> order;
  private final PriorityQueue<Held<T>> byOrder;
  private final ArrayDeque<Held<T>> byArrival = new ArrayDeque<>();
  private long nextSeq;
  private final Set<Long> released = new HashSet<>();

  public ReorderBuffer(long waitMs, Comparator<T> order) {
    if (waitMs < 0) {
      throw new IllegalArgumentException("waitMs must be >= 0, got " + waitMs);
    }
    this.waitMs = waitMs;
    this.order = order;
    this.byOrder =
        new PriorityQueue<>((a, b) -> {
          int c = order.compare(a.item(), b.item());
          return c != 0 ? c : Long.compare(a.seq(), b.seq());
        });
  }

  /** Holds {@code item}, arrived at {@code arrivedMs} (arrivals must not go back in time). */
  public void add(T item, long arrivedMs) {
    Held<T> held = new Held<>(item, arrivedMs + waitMs, nextSeq++);
    byOrder.add(held);
    byArrival.addLast(held);
  }

  /** The items to evaluate now, in order (see the class contract). */
  public List<T> release(long nowMs) {
    Held<T> last = null;
    while (!byArrival.isEmpty() && byArrival.peekFirst().dueMs() <= nowMs) {
      Held<T> due = byArrival.pollFirst();
      if (released.remove(due.seq())) {
        continue;
      }
      if (last == null || byOrder.comparator().compare(due, last) > 0) {
        last = due;
      }
    }
    if (last == null) {
      return List.of();
    }
    List<T> out = new ArrayList<>();
    while (!byOrder.isEmpty() && byOrder.comparator().compare(byOrder.peek(), last) <= 0) {
      Held<T> next = byOrder.poll();
      out.add(next.item());
      if (next.dueMs() > nowMs) {
        released.add(next.seq()); // still queued by arrival: skip it there later
      }
    }
    return out;
  }

  /** When the earliest held item becomes due; null when nothing is held. */
  public Long nextDueMs() {
    while (!byArrival.isEmpty() && released.contains(byArrival.peekFirst().seq())) {
      released.remove(byArrival.pollFirst().seq());
    }
    return byArrival.isEmpty() ? null : byArrival.peekFirst().dueMs();
  }

  /** Number of items held. */
  public int size() {
    return byOrder.size();
  }
}
