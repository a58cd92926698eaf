package io.fraudstream.evaluator.spark;

import io.fraudstream.evaluator.core.Engine;
import io.fraudstream.evaluator.core.EventCodec;
import io.fraudstream.evaluator.core.GroupStore;
import io.fraudstream.evaluator.core.GroupWindow;
import io.fraudstream.evaluator.core.StoredEvent;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.spark.sql.streaming.MapState;
import org.apache.spark.sql.streaming.ValueState;
import scala.Tuple2;

/**
 * One bucket's detector state in Spark's state store, with a per-JVM cache of decoded state in front of it.
 *
 * <p>Layout per bucket: ValueState {@code engine} = the rule set ({@link Engine#toBytes}); ValueState {@code
 * generation}; MapState {@code heads} = group key -> window head ({@link EventCodec#encodeHead}); MapState {@code
 * events} = group key + U+0001 + event id -> one stored event. Every event is written once when it arrives and
 * removed once when it leaves the window (a projection change, which only a rule change causes, rewrites the
 * group), so a transaction costs O(1) state writes per group, whatever the window's size.
 *
 * <p>The cache is trusted only while the bucket's generation in the store equals the generation it was written
 * at. Every task that processes the bucket bumps the stored generation ({@link #claim}), so after a failed task
 * (whose state the store discards) or a bucket that another JVM processed, the next claim finds a mismatch and
 * reloads from the store.
 */
final class BucketState {
  private static final char SEPARATOR = '\u0001';
  /**
   * What one cached event holds on the heap with its share of the window's indexes and aggregators, measured: at the
   * end of a 15-minute 1 000 tx/s benchmark the detector JVM retained ~2.9 GB after GC for ~3.6 million cached events.
   */
  private static final long BYTES_PER_CACHED_EVENT = 800;

  /**
   * The decoded events all buckets of this JVM keep: about two thirds of the heap. Least recently used groups beyond
   * it are dropped from the cache (the store keeps them; a later use reloads the whole window, which costs a store
   * read per event: a smaller cache that evicts groups still in use thrashes and falls behind, see docs/BENCHMARKS.md),
   * but never a group the current call used: it would be reloaded at its next record.
   */
  private static final long MAX_CACHED_EVENTS =
      Math.max(100_000L, Runtime.getRuntime().maxMemory() * 2 / 3 / BYTES_PER_CACHED_EVENT);

  private static final Map<String, BucketState> CACHES = new ConcurrentHashMap<>();

  private long generation;
  private Engine engine;
  private long lastSweepMs;
  private final LinkedHashMap<String, GroupWindow> windows = new LinkedHashMap<>(1024, 0.75f, true);
  private final Map<String, Integer> cachedSizes = new HashMap<>();
  private long cachedEvents;

  private BucketState(long generation, Engine engine, long nowMs) {
    this.generation = generation;
    this.engine = engine;
    this.lastSweepMs = nowMs;
  }

  /**
   * Claims bucket {@code cacheKey}'s cache for one task: the cache, valid for the generation in the store (a fresh
   * one when it is not), with the generation moved on in both. Everything the task writes is committed with that
   * new generation, or discarded with it when the task fails, and then the next claim finds a mismatch and reloads.
   * So a task reads and writes the generation once, however many records it processes.
   */
  static BucketState claim(
      String cacheKey,
      ValueState<Long> generationState,
      ValueState<byte[]> engineState,
      long latenessMs,
      long futureSkewMs,
      long nowMs) {
    long stored = generationState.exists() ? generationState.get() : 0L;
    BucketState cached = CACHES.get(cacheKey);
    if (cached == null || cached.generation != stored) {
      Engine engine =
          engineState.exists()
              ? Engine.fromBytes(engineState.get(), latenessMs, futureSkewMs)
              : new Engine(latenessMs, futureSkewMs);
      cached = new BucketState(stored, engine, nowMs);
      CACHES.put(cacheKey, cached);
    }
    cached.generation = stored + 1;
    generationState.update(cached.generation);
    return cached;
  }

  Engine engine() {
    return engine;
  }

  /** Whether {@code sweepIntervalMs} passed since the last sweep (or since this cache was loaded). */
  boolean sweepDue(long nowMs, long sweepIntervalMs) {
    if (nowMs - lastSweepMs < sweepIntervalMs) {
      return false;
    }
    lastSweepMs = nowMs;
    return true;
  }

  /** The GroupStore of one call: reads through the cache, writes changed groups back at {@link #flush}. */
  final class Groups implements GroupStore {
    private final MapState<String, byte[]> heads;
    private final MapState<String, byte[]> events;
    private final Map<String, GroupWindow> dirty = new LinkedHashMap<>();
    private final Set<String> used = new HashSet<>();

    Groups(MapState<String, byte[]> heads, MapState<String, byte[]> events) {
      this.heads = heads;
      this.events = events;
    }

    @Override
    public GroupWindow get(String groupKey) {
      used.add(groupKey);
      GroupWindow window = windows.get(groupKey);
      if (window != null) {
        return window;
      }
      byte[] head = heads.getValue(groupKey);
      if (head == null) {
        return null;
      }
      EventCodec.Head decoded = EventCodec.decodeHead(head);
      List<StoredEvent> stored = new ArrayList<>();
      for (long id = decoded.minLiveId(); id < decoded.nextEventId(); id++) {
        byte[] event = events.getValue(eventKey(groupKey, id));
        if (event != null) {
          stored.add(EventCodec.decode(event));
        }
      }
      window =
          GroupWindow.restore(
              decoded.fieldNames(),
              stored,
              decoded.maxEventTimeMs(),
              decoded.floorMs(),
              decoded.nextEventId(),
              decoded.maxIngestTsMs());
      cache(groupKey, window);
      return window;
    }

    @Override
    public void put(String groupKey, GroupWindow window) {
      used.add(groupKey);
      cache(groupKey, window);
      dirty.put(groupKey, window);
    }

    @Override
    public void delete(String groupKey) {
      byte[] head = heads.getValue(groupKey);
      if (head != null) {
        EventCodec.Head decoded = EventCodec.decodeHead(head);
        for (long id = decoded.minLiveId(); id < decoded.nextEventId(); id++) {
          events.removeKey(eventKey(groupKey, id));
        }
        heads.removeKey(groupKey);
      }
      uncache(groupKey);
      dirty.remove(groupKey);
    }

    /** Writes every changed group: its new events, its evictions and its head. */
    void flush() {
      for (Map.Entry<String, GroupWindow> entry : dirty.entrySet()) {
        String groupKey = entry.getKey();
        GroupWindow window = entry.getValue();
        List<StoredEvent> journal = window.takeJournal();
        Iterable<StoredEvent> writes = window.takeReprojected() ? window.events() : journal;
        for (StoredEvent event : writes) {
          events.updateValue(eventKey(groupKey, event.id()), EventCodec.encode(event));
        }
        for (long id : window.takeEvicted()) {
          events.removeKey(eventKey(groupKey, id));
        }
        heads.updateValue(groupKey, EventCodec.encodeHead(window));
        cache(groupKey, window);
      }
      dirty.clear();
      int budgetShare = Math.max(1, CACHES.size());
      // Access order puts the groups this call used last: eviction stops at the first of them.
      java.util.Iterator<Map.Entry<String, GroupWindow>> eldest = windows.entrySet().iterator();
      while (cachedEvents > MAX_CACHED_EVENTS / budgetShare && eldest.hasNext()) {
        String groupKey = eldest.next().getKey();
        if (used.contains(groupKey)) {
          break;
        }
        eldest.remove();
        Integer size = cachedSizes.remove(groupKey);
        cachedEvents -= size == null ? 0 : size;
      }
    }

    /** Deletes the groups whose retention has passed on the engine's clock; returns how many. */
    int sweep() {
      List<String> expired = new ArrayList<>();
      scala.collection.Iterator<Tuple2<String, byte[]>> all = heads.iterator();
      while (all.hasNext()) {
        Tuple2<String, byte[]> entry = all.next();
        if (engine.groupExpired(entry._1(), EventCodec.decodeHead(entry._2()).maxEventTimeMs())) {
          expired.add(entry._1());
        }
      }
      expired.forEach(this::delete);
      return expired.size();
    }
  }

  private void cache(String groupKey, GroupWindow window) {
    windows.put(groupKey, window);
    Integer previous = cachedSizes.put(groupKey, window.size());
    cachedEvents += window.size() - (previous == null ? 0 : previous);
  }

  private void uncache(String groupKey) {
    windows.remove(groupKey);
    Integer size = cachedSizes.remove(groupKey);
    cachedEvents -= size == null ? 0 : size;
  }

  private static String eventKey(String groupKey, long id) {
    return groupKey + SEPARATOR + id;
  }
}
