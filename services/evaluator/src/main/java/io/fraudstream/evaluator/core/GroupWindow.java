package io.fraudstream.evaluator.core;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.Set;

/**
 * One group's stored events, event-time horizon and per-rule aggregators (port of windows.GroupWindow).
 *
 * <p>Contracts: events are sorted by event time, ties by id (= insertion order), and addressed by absolute indices
 * that eviction and compaction never change. {@link #maxEventTimeMs()} is the largest event time ever stored and
 * {@link #maxIngestTsMs()} the largest ingestion timestamp; every live event is at or above {@link #floorMs()}, which
 * the caller sets to the group's horizon after each insertion (a floor that moves down brings nothing back). {@link
 * #fieldNames()} is the projection the events' values follow; {@link #prepare} changes it. Aggregators are derived
 * state, rebuilt from the events after {@link #restore}.
 *
 * <p>Persistence hooks, each reporting what changed since its previous call: {@link #takeJournal()} (events inserted
 * and still live), {@link #takeEvicted()} (ids of events that fell below the floor; may name events never taken from
 * the journal), {@link #takeReprojected()} (whether the projection changed, so every live event must be rewritten).
 * Writing the journal, deleting the evicted ids and writing the head after each batch keeps an id-keyed copy of the
 * live events exact. Not thread-safe.
 */
public final class GroupWindow implements EventLog {
  private static final int COMPACT_AFTER = 256;

  private List<String> fieldNames;
  private final ArrayList<StoredEvent> events = new ArrayList<>();
  private long[] times = new long[8];
  private int head; // events[:head] are evicted, awaiting compaction
  private long base; // absolute index of events[0]
  private Long maxMs;
  private Long maxIngestMs;
  private Long floorMs;
  private long nextEventId;
  private final Map<String, Map.Entry<WindowSpec, WindowAggregator>> aggregators = new LinkedHashMap<>();
  private List<StoredEvent> journal = new ArrayList<>();
  private List<Long> evicted = new ArrayList<>();
  private boolean reprojected;
  private final PriorityQueue<Long> liveIds = new PriorityQueue<>();
  private final Set<Long> evictedIds = new HashSet<>();

  /** An empty window projecting {@code fieldNames}. */
  public GroupWindow(List<String> fieldNames) {
    this.fieldNames = List.copyOf(fieldNames);
  }

  /**
   * A window holding {@code events} (any order; sorted by event time, then id; those below {@code floorMs} dropped),
   * with empty journal, evictions and reprojection flag.
   */
  public static GroupWindow restore(
      List<String> fieldNames,
      List<StoredEvent> events,
      Long maxEventTimeMs,
      Long floorMs,
      long nextEventId,
      Long maxIngestTsMs) {
    GroupWindow window = new GroupWindow(fieldNames);
    List<StoredEvent> sorted = new ArrayList<>(events);
    sorted.sort(Comparator.comparingLong(StoredEvent::eventTimeMs).thenComparingLong(StoredEvent::id));
    for (StoredEvent event : sorted) {
      if (floorMs == null || event.eventTimeMs() >= floorMs) {
        window.events.add(event);
        window.liveIds.add(event.id());
      }
    }
    window.times = new long[Math.max(8, window.events.size() * 2)];
    for (int i = 0; i < window.events.size(); i++) {
      window.times[i] = window.events.get(i).eventTimeMs();
    }
    window.maxMs = maxEventTimeMs;
    window.maxIngestMs = maxIngestTsMs;
    window.floorMs = floorMs;
    window.nextEventId = nextEventId;
    return window;
  }

  public List<String> fieldNames() {
    return fieldNames;
  }

  public Long maxEventTimeMs() {
    return maxMs;
  }

  /** The largest ingestion timestamp of the events ever stored; null before the first. */
  public Long maxIngestTsMs() {
    return maxIngestMs;
  }

  public Long floorMs() {
    return floorMs;
  }

  /** The id the next inserted event gets (ids start at 0 and only grow). */
  public long nextEventId() {
    return nextEventId;
  }

  /** Number of live events. */
  public int size() {
    return events.size() - head;
  }

  /** The live events in order (an unmodifiable view, valid until the next change). */
  public List<StoredEvent> events() {
    return Collections.unmodifiableList(events.subList(head, events.size()));
  }

  /**
   * Events inserted since the previous call, in insertion order, that are still live; after a reprojection only
   * those inserted since it (all live events are to be rewritten then anyway).
   */
  public List<StoredEvent> takeJournal() {
    List<StoredEvent> taken = journal;
    journal = new ArrayList<>();
    if (floorMs != null) {
      long floor = floorMs;
      taken.removeIf(event -> event.eventTimeMs() < floor);
    }
    return taken;
  }

  /** Ids of the events that fell below the floor since the previous call. */
  public List<Long> takeEvicted() {
    List<Long> taken = evicted;
    evicted = new ArrayList<>();
    return taken;
  }

  /** Whether {@link #prepare} changed the projection since the previous call. */
  public boolean takeReprojected() {
    boolean taken = reprojected;
    reprojected = false;
    return taken;
  }

  // EventLog

  @Override
  public long endIndex() {
    return base + events.size();
  }

  @Override
  public long timeAt(long index) {
    return times[(int) (index - base)];
  }

  @Override
  public StoredEvent eventAt(long index) {
    return events.get((int) (index - base));
  }

  @Override
  public long indexAtOrAfter(long eventTimeMs) {
    return base + bisect(eventTimeMs, false);
  }

  /** First position >= head whose time is >= t (bisect_left) or > t (bisect_right). */
  private int bisect(long eventTimeMs, boolean right) {
    int lo = head;
    int hi = events.size();
    while (lo < hi) {
      int mid = (lo + hi) >>> 1;
      if (right ? times[mid] <= eventTimeMs : times[mid] < eventTimeMs) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return lo;
  }

  /** Adopt projection {@code newFieldNames} and keep exactly one up-to-date aggregator per spec (by rule id). */
  void prepare(List<String> newFieldNames, Map<String, WindowSpec> specs) {
    if (!newFieldNames.equals(fieldNames)) {
      Map<String, Integer> positions = new HashMap<>();
      for (int i = 0; i < fieldNames.size(); i++) {
        positions.put(fieldNames.get(i), i);
      }
      int[] picks = new int[newFieldNames.size()];
      for (int i = 0; i < picks.length; i++) {
        picks[i] = positions.getOrDefault(newFieldNames.get(i), -1);
      }
      for (int i = head; i < events.size(); i++) {
        StoredEvent event = events.get(i);
        Object[] values = new Object[picks.length];
        for (int j = 0; j < picks.length; j++) {
          values[j] = picks[j] < 0 ? Missing.MISSING : event.values().get(picks[j]);
        }
        events.set(i, event.withValues(Collections.unmodifiableList(Arrays.asList(values))));
      }
      journal.clear(); // every live event is rewritten after a reprojection
      fieldNames = List.copyOf(newFieldNames);
      aggregators.clear();
      reprojected = true;
    }
    aggregators.keySet().removeIf(slot -> !specs.containsKey(slot));
    for (Map.Entry<String, WindowSpec> entry : specs.entrySet()) {
      Map.Entry<WindowSpec, WindowAggregator> current = aggregators.get(entry.getKey());
      WindowSpec spec = entry.getValue();
      if (current == null || (current.getKey() != spec && !current.getKey().equals(spec))) {
        aggregators.put(entry.getKey(), Map.entry(spec, spec.build(this, maxMs)));
      }
    }
  }

  /** Store an event (at or above the horizon) under the next id, and tell every aggregator. */
  StoredEvent insert(long eventTimeMs, long ingestTsMs, int partition, long offset, long ruleSeq, List<Object> values) {
    StoredEvent event = new StoredEvent(nextEventId++, eventTimeMs, ingestTsMs, partition, offset, ruleSeq, values);
    int position;
    if (maxMs == null || eventTimeMs >= maxMs) {
      position = events.size();
      maxMs = eventTimeMs;
    } else {
      position = bisect(eventTimeMs, true);
    }
    if (events.size() == times.length) {
      times = Arrays.copyOf(times, times.length * 2);
    }
    System.arraycopy(times, position, times, position + 1, events.size() - position);
    times[position] = eventTimeMs;
    events.add(position, event);
    if (maxIngestMs == null || ingestTsMs > maxIngestMs) {
      maxIngestMs = ingestTsMs;
    }
    journal.add(event);
    liveIds.add(event.id());
    long index = base + position;
    for (Map.Entry<WindowSpec, WindowAggregator> aggregator : aggregators.values()) {
      aggregator.getValue().onInsert(this, index);
    }
    return event;
  }

  /** The aggregate of {@code slot}'s rule over {@code [eventTimeMs - windowMs, eventTimeMs]}. */
  WindowAggregate aggregate(String slot, long eventTimeMs) {
    return aggregators.get(slot).getValue().query(this, eventTimeMs);
  }

  /** Set the floor, evicting the events below it. */
  void setFloor(long newFloorMs) {
    if (floorMs != null && newFloorMs == floorMs) {
      return;
    }
    floorMs = newFloorMs;
    int h = head;
    while (h < events.size() && times[h] < newFloorMs) {
      long id = events.get(h).id();
      evicted.add(id);
      evictedIds.add(id);
      h++;
    }
    if (h > COMPACT_AFTER && h * 2 > events.size()) {
      events.subList(0, h).clear();
      System.arraycopy(times, h, times, 0, events.size());
      base += h;
      h = 0;
    }
    head = h;
    pruneLiveIds();
  }

  private void pruneLiveIds() {
    while (!liveIds.isEmpty() && evictedIds.remove(liveIds.peek())) {
      liveIds.poll();
    }
  }

  /** Smallest id of a live event, or {@link #nextEventId()} if none is live. */
  public long minLiveId() {
    pruneLiveIds();
    return liveIds.isEmpty() ? nextEventId : liveIds.peek();
  }
}
