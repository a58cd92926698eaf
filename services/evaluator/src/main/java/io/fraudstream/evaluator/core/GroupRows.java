package io.fraudstream.evaluator.core;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * A group window kept as rows in three key-value tables, so that a transaction costs O(1) row writes per group
 * whatever its window's size: {@code heads} maps the group key to its head ({@link EventCodec#encodeHead}); {@code
 * events} holds one row per live event, key {@code group U+0001 event id}; {@code buckets} one row per bucket slot
 * ({@link GroupWindow.BucketSlot}: a precision and a bucket index) at which some bucketed rule holds a bucket, key
 * {@code group U+0001 p precision U+0001 bucket index}, holding every such rule's bucket there ({@link
 * EventCodec#encodeSlot}). So an event a group's bucketed rules of one precision all take in costs one bucket row
 * write, however many they are.
 *
 * <p>Contract: after {@link #write} of every window changed since its last load, {@link #load} returns a window
 * equal in events, maxima, floor and buckets, and the tables hold no row of an evicted event, an empty bucket slot
 * or a deleted group. Each event is written once when it arrives and removed once when it leaves (a projection
 * change, which only a rule change causes, rewrites the group's events).
 *
 * <p>A group may also have one snapshot row in {@code events} ({@link #saveSnapshot}, which the shell calls when its
 * cache drops a window): the index of its live events and its exact aggregators' state. A load then reads the head,
 * the snapshot and the buckets, and no event: the window reads back those its next steps need through its pager.
 * Without a snapshot of the current head, a load reads every live event.
 *
 * <p>Groups written before bucket slots (head format 3) kept one row per rule window and bucket index, key {@code
 * group U+0001 window start seq U+0001 bucket index}: {@link #load} reads such a group and rewrites its buckets as
 * slots, and {@link #delete} removes either kind.
 */
public final class GroupRows {
  /** One key-value table (a Spark MapState, or a map in tests). */
  public interface Table {
    byte[] get(String key);

    void put(String key, byte[] value);

    void remove(String key);

    /** A table of these three operations. */
    static Table of(
        Function<String, byte[]> get, BiConsumer<String, byte[]> put, Consumer<String> remove) {
      return new Table() {
        @Override
        public byte[] get(String key) {
          return get.apply(key);
        }

        @Override
        public void put(String key, byte[] value) {
          put.accept(key, value);
        }

        @Override
        public void remove(String key) {
          remove.accept(key);
        }
      };
    }
  }

  private static final char SEPARATOR = '\u0001';

  /**
   * The fewest live events a window holds for {@link #saveSnapshot} to keep its snapshot: a window of fewer is read
   * back from about as many rows as the snapshot would save, and its snapshot would be one more row to write.
   */
  public static final int SNAPSHOT_MIN_EVENTS = 8;

  private final Table heads;
  private final Table events;
  private final Table buckets;

  private final int snapshotMinEvents;

  public GroupRows(Table heads, Table events, Table buckets) {
    this(heads, events, buckets, SNAPSHOT_MIN_EVENTS);
  }

  /** Rows whose {@link #saveSnapshot} keeps the snapshots of windows of at least {@code snapshotMinEvents} events. */
  public GroupRows(Table heads, Table events, Table buckets, int snapshotMinEvents) {
    this.heads = heads;
    this.events = events;
    this.buckets = buckets;
    this.snapshotMinEvents = snapshotMinEvents;
  }

  /** Reads the group's events back from their rows, for a window that paged them out ({@link GroupWindow#pageOut}). */
  public EventPager pager(String groupKey) {
    return id -> {
      byte[] event = events.get(eventKey(groupKey, id));
      return event == null ? null : EventCodec.decode(event);
    };
  }

  /**
   * The group's window as last written, with this table's {@link #pager}; null if the group has no head. Resumed from
   * the group's snapshot ({@link #saveSnapshot}) when there is one of its current head, every event paged out; else
   * rebuilt from its event rows (a corrupt snapshot only costs that).
   */
  public GroupWindow load(String groupKey) {
    byte[] head = heads.get(groupKey);
    if (head == null) {
      return null;
    }
    EventCodec.Head decoded = EventCodec.decodeHead(head);
    EventPager pager = pager(groupKey);
    // A window of fewer ids than the threshold holds fewer events, so no snapshot was kept at this head.
    GroupWindow.Snapshot snapshot =
        decoded.nextEventId() - decoded.minLiveId() < snapshotMinEvents ? null : snapshotOf(groupKey, head);
    List<StoredEvent> stored = new ArrayList<>();
    if (snapshot == null) {
      for (long id = decoded.minLiveId(); id < decoded.nextEventId(); id++) {
        StoredEvent event = pager.load(id);
        if (event != null) {
          stored.add(event);
        }
      }
    }
    Map<GroupWindow.BucketsOf, TreeMap<Long, Bucket>> held = new HashMap<>();
    for (GroupWindow.BucketSpan span : decoded.buckets()) {
      for (long index = span.first(); index <= span.last(); index++) {
        byte[] slot = buckets.get(slotKey(groupKey, span.precisionMs(), index));
        if (slot != null) {
          long at = index;
          EventCodec.decodeSlot(slot)
              .forEach(
                  (seq, bucket) ->
                      held.computeIfAbsent(new GroupWindow.BucketsOf(seq, span.precisionMs()), w -> new TreeMap<>())
                          .put(at, bucket));
        }
      }
    }
    for (EventCodec.WindowBuckets range : decoded.windowBuckets()) {
      TreeMap<Long, Bucket> byIndex = held.computeIfAbsent(range.window(), w -> new TreeMap<>());
      for (long index = range.first(); index <= range.last(); index++) {
        byte[] bucket = buckets.get(windowBucketKey(groupKey, range.window(), index));
        if (bucket != null) {
          byIndex.put(index, EventCodec.decodeBucket(bucket));
        }
      }
    }
    GroupWindow window =
        snapshot != null
            ? GroupWindow.resume(decoded, snapshot, held)
            : GroupWindow.restore(
                decoded.fieldNames(),
                stored,
                decoded.maxEventTimeMs(),
                decoded.floorMs(),
                decoded.nextEventId(),
                decoded.maxIngestTsMs(),
                held);
    window.attachPager(pager);
    if (!decoded.windowBuckets().isEmpty()) { // format 3: its buckets become slots now
      for (GroupWindow.BucketSlot slot : window.bucketSlots()) {
        writeSlot(groupKey, window, slot);
      }
      deleteWindowBuckets(groupKey, decoded);
      heads.put(groupKey, EventCodec.encodeHead(window));
    }
    return window;
  }

  /** The group's snapshot if it was taken at {@code head} and is readable; null otherwise. */
  private GroupWindow.Snapshot snapshotOf(String groupKey, byte[] head) {
    byte[] row = events.get(snapshotKey(groupKey));
    if (row == null) {
      return null;
    }
    try {
      EventCodec.SavedWindow saved = EventCodec.decodeSnapshot(row);
      return Arrays.equals(saved.head(), head) ? saved.snapshot() : null;
    } catch (CorruptStateException exc) {
      return null;
    }
  }

  /**
   * Keeps the snapshot of a window whose changes are all written ({@link GroupWindow#snapshot}), so that {@link
   * #load} can resume it without reading its events, if it holds at least {@link #SNAPSHOT_MIN_EVENTS} live events
   * (or as many as the constructor says).
   * The snapshot serves only while the group's head is the one it was taken at: any later write of the group makes
   * it stale, and the next snapshot replaces it. Returns whether it wrote one.
   */
  public boolean saveSnapshot(String groupKey, GroupWindow window) {
    if (window.size() < snapshotMinEvents) {
      return false;
    }
    GroupWindow.Snapshot snapshot = window.snapshot();
    if (snapshot == null) {
      return false;
    }
    events.put(snapshotKey(groupKey), EventCodec.encodeSnapshot(EventCodec.encodeHead(window), snapshot));
    return true;
  }

  /** Writes what changed in the group's window since its previous write: new events, evictions, buckets, head. */
  public void write(String groupKey, GroupWindow window) {
    List<StoredEvent> journal = window.takeJournal();
    Iterable<StoredEvent> writes = window.takeReprojected() ? window.events() : journal;
    for (StoredEvent event : writes) {
      events.put(eventKey(groupKey, event.id()), EventCodec.encode(event));
    }
    for (long id : window.takeEvicted()) {
      events.remove(eventKey(groupKey, id));
    }
    for (GroupWindow.BucketSlot slot : window.takeBucketChanges()) {
      writeSlot(groupKey, window, slot);
    }
    heads.put(groupKey, EventCodec.encodeHead(window));
  }

  private void writeSlot(String groupKey, GroupWindow window, GroupWindow.BucketSlot slot) {
    SortedMap<Long, Bucket> held = window.bucketsAt(slot);
    String key = slotKey(groupKey, slot.precisionMs(), slot.index());
    if (held.isEmpty()) {
      buckets.remove(key);
    } else {
      buckets.put(key, EventCodec.encodeSlot(held));
    }
  }

  /** Removes every row of the group. */
  public void delete(String groupKey) {
    byte[] head = heads.get(groupKey);
    if (head == null) {
      return;
    }
    EventCodec.Head decoded = EventCodec.decodeHead(head);
    for (long id = decoded.minLiveId(); id < decoded.nextEventId(); id++) {
      events.remove(eventKey(groupKey, id));
    }
    for (GroupWindow.BucketSpan span : decoded.buckets()) {
      for (long index = span.first(); index <= span.last(); index++) {
        buckets.remove(slotKey(groupKey, span.precisionMs(), index));
      }
    }
    deleteWindowBuckets(groupKey, decoded);
    events.remove(snapshotKey(groupKey));
    heads.remove(groupKey);
  }

  private void deleteWindowBuckets(String groupKey, EventCodec.Head decoded) {
    for (EventCodec.WindowBuckets range : decoded.windowBuckets()) {
      for (long index = range.first(); index <= range.last(); index++) {
        buckets.remove(windowBucketKey(groupKey, range.window(), index));
      }
    }
  }

  /** The largest event time a group head records (null before the first event). */
  public static Long maxEventTimeMs(byte[] head) {
    return EventCodec.decodeHead(head).maxEventTimeMs();
  }

  /** Whether {@code rowKey} is a row of the group {@code groupKey} (in the events or buckets table). */
  public static boolean belongsTo(String rowKey, String groupKey) {
    return rowKey.length() > groupKey.length()
        && rowKey.startsWith(groupKey)
        && rowKey.charAt(groupKey.length()) == SEPARATOR;
  }

  private static String eventKey(String groupKey, long id) {
    return groupKey + SEPARATOR + id;
  }

  /** The key of the group's snapshot row, in the events table (an event's key ends in digits, this one does not). */
  static String snapshotKey(String groupKey) {
    return groupKey + SEPARATOR + 's';
  }

  private static String slotKey(String groupKey, long precisionMs, long index) {
    return groupKey + SEPARATOR + 'p' + precisionMs + SEPARATOR + index;
  }

  /** A bucket row's key under a format-3 head. */
  static String windowBucketKey(String groupKey, GroupWindow.BucketsOf window, long index) {
    return groupKey + SEPARATOR + window.windowStartSeq() + SEPARATOR + index;
  }
}
