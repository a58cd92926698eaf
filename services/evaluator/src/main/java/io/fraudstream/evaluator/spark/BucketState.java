package io.fraudstream.evaluator.spark;

import io.fraudstream.evaluator.core.Engine;
import io.fraudstream.evaluator.core.GroupRows;
import io.fraudstream.evaluator.core.GroupStore;
import io.fraudstream.evaluator.core.GroupWindow;
import io.fraudstream.evaluator.core.KeyGroupTable;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import org.apache.spark.sql.streaming.MapState;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import scala.Tuple2;

/**
 * One bucket's detector state in Spark's state store, with a per-JVM cache of decoded state in front of it.
 *
 * <p>In the store ({@link BucketStore}): the rule set ({@link Engine#toBytes}), the generation, and the groups'
 * windows as rows ({@link GroupRows}: a head per group, one row per live event and per bucket of a bucketed rule), so
 * a transaction costs O(1) state writes per group, whatever the window's size.
 *
 * <p>The cache holds decoded windows, each paged ({@link GroupWindow#pageOut}): in memory a window keeps its
 * aggregators, the index of its events (time and id) and the decoded events the next steps read (its far edges and
 * its last lateness); the others are read back from the store on demand. The cache is bounded in bytes ({@link
 * GroupWindow#heapBytes}): least recently used groups beyond the budget are dropped (the store keeps them), but never
 * a group the current call used.
 *
 * <p>A sweep walks the store only when some group in it may be past its horizon. The bucket keeps lower bounds of
 * its groups' newest event times: per key group, of the groups the last finished walk kept, and overall, of the
 * groups written since that walk began. They are known from the start for a store that holds no group yet, and from
 * the first walk for a store restored with groups; a rule change after groups were written since the last walk
 * began makes them unknown until the next walk, since those groups' key groups may have lost their rules.
 *
 * <p>The cache is trusted only while the bucket's generation in the store equals the generation it was written
 * at. Every task that processes the bucket bumps the stored generation ({@link #claim}), so after a failed task
 * (whose state the store discards) or a bucket that another JVM processed, the next claim finds a mismatch and
 * reloads from the store.
 */
final class BucketState {
  /**
   * The cache budget of a JVM whose setting is 0: a quarter of its heap; the rest is Spark's, the Kafka clients' and
   * each record's garbage. (The first paged build gave the cache half of a 4 GiB heap, by estimates a third too low:
   * ~3 GB stayed after GC at minute 20 of a soak, and G1's mixed pauses took 130-200 ms every 2 s.)
   */
  static final long DEFAULT_CACHE_BYTES = Runtime.getRuntime().maxMemory() / 4;

  /** The key groups the sweep tells apart by prefix before it starts over (rule churn; see {@link KeyGroupTable}). */
  private static final int SWEPT_KEY_GROUPS = 256;

  private static final Map<String, BucketState> CACHES = new ConcurrentHashMap<>();
  private static final Logger LOG = LoggerFactory.getLogger(BucketState.class);

  private final String cacheKey;
  private long generation;
  private Engine engine;
  private long lastSweepMs;
  /** The sweep's walk in progress, or null. */
  private Walk walk;
  /**
   * Per key group, a lower bound of the newest event time of its groups the last finished walk kept (none: the walk
   * kept no group of it); null: unknown.
   */
  private Map<List<String>, Long> walkedFloorsMs;
  /** A lower bound of the newest event time of the groups written since the last finished walk began; null: none. */
  private Long writtenFloorMs;
  private long cacheBytes;
  private final LinkedHashMap<String, Cached> windows = new LinkedHashMap<>(1024, 0.75f, true);
  private long cachedBytes;
  private final CacheAdmission admission;
  /** The key groups of the store's group keys, found by the sweep's walk without parsing each key. */
  private final KeyGroupTable<List<String>> sweptKeyGroups = new KeyGroupTable<>(SWEPT_KEY_GROUPS, List::copyOf);

  /**
   * What one call's reads of group windows found (in the cache; read back from the store, from its events or resumed
   * from its snapshot; or in neither: a new group) and how many windows its flush dropped from the cache: the cache's
   * metrics.
   */
  record CacheActivity(long cached, long loaded, long resumed, long absent, long evicted) {}

  /** A cached window and its heap estimate ({@link GroupWindow#heapBytes}) when it was last weighed. */
  private static final class Cached {
    final GroupWindow window;
    long bytes;

    Cached(GroupWindow window) {
      this.window = window;
    }
  }

  private BucketState(String cacheKey, long generation, Engine engine, long nowMs, boolean storeHasGroups) {
    this.cacheKey = cacheKey;
    this.generation = generation;
    this.engine = engine;
    this.lastSweepMs = nowMs;
    this.walkedFloorsMs = storeHasGroups ? null : new HashMap<>();
    this.admission = new CacheAdmission(cacheKey);
  }

  /**
   * Claims bucket {@code cacheKey}'s cache for one task: the cache, valid for the generation in the store (a fresh
   * one when it is not), with a new generation in both. Everything the task writes is committed with that new
   * generation, or discarded with it when the task fails, and then the next claim finds a mismatch and reloads.
   * So a task reads and writes the generation once, however many records it processes. A new generation is drawn at
   * random, not counted on: a task that failed in one JVM and was retried in another would otherwise commit the
   * very generation the first JVM's cache holds, and that cache, which lacks the retry's work, would be trusted.
   */
  static BucketState claim(
      String cacheKey, BucketStore store, long latenessMs, long futureSkewMs, long cacheBytes, long nowMs) {
    long stored = store.generation();
    BucketState cached = CACHES.get(cacheKey);
    if (cached == null || cached.generation != stored) {
      // A store without a rule set holds no group: groups are written only for key groups that have rules, and the
      // rule set is written in the task that first applies a rule.
      byte[] ruleSet = store.engine();
      boolean restored = ruleSet != null;
      Engine engine =
          restored ? Engine.fromBytes(ruleSet, latenessMs, futureSkewMs) : new Engine(latenessMs, futureSkewMs);
      cached = new BucketState(cacheKey, stored, engine, nowMs, restored);
      CACHES.put(cacheKey, cached);
    }
    cached.cacheBytes = cacheBytes > 0 ? cacheBytes : DEFAULT_CACHE_BYTES;
    long next;
    do {
      next = ThreadLocalRandom.current().nextLong();
    } while (next == stored || next == 0L);
    cached.generation = next;
    store.setGeneration(cached.generation);
    return cached;
  }

  Engine engine() {
    return engine;
  }

  /**
   * Call after the rule set changed: groups written since the last walk began may belong to a key group that lost
   * its rules, which only a walk finds, so the bounds become unknown until a walk that begins after the change ends.
   */
  void rulesChanged() {
    if (writtenFloorMs != null || walk != null && walk.writtenFloorMs != null) {
      forgetBounds();
    }
  }

  /** Whether a group in the store may be past its horizon on the engine's clock, by the bounds; true when unknown. */
  private boolean mayHoldExpiredGroups() {
    if (walkedFloorsMs == null) {
      return true;
    }
    for (Map.Entry<List<String>, Long> floor : walkedFloorsMs.entrySet()) {
      if (engine.groupExpired(floor.getKey(), floor.getValue())) {
        return true;
      }
    }
    // The groups written since belong to key groups that had rules then, and still have (see rulesChanged).
    return writtenFloorMs != null
        && engine.keyGroups().stream().anyMatch(keyGroup -> engine.groupExpired(keyGroup, writtenFloorMs));
  }

  private void forgetBounds() {
    walkedFloorsMs = null;
    if (walk != null) {
      walk.trusted = false;
    }
  }

  private void written(GroupWindow window) {
    Long newestMs = window.maxEventTimeMs();
    if (newestMs == null) { // a group without events, always expired: only a walk finds it
      forgetBounds();
      return;
    }
    writtenFloorMs = writtenFloorMs == null ? newestMs : Math.min(writtenFloorMs, newestMs);
    if (walk != null) {
      walk.writtenFloorMs = walk.writtenFloorMs == null ? newestMs : Math.min(walk.writtenFloorMs, newestMs);
    }
  }

  /**
   * A walk over the heads of the task of generation {@code generation}, with the same two bounds as it gathers them
   * and whether they will be known when it ends (not after a rule change that followed writes), and what it did.
   */
  private static final class Walk {
    final scala.collection.Iterator<Tuple2<String, byte[]>> heads;
    final long generation;
    final long startMs;
    long stepMs;
    final Map<List<String>, Long> floorsMs = new HashMap<>();
    Long writtenFloorMs;
    boolean trusted = true;
    long read;
    long deleted;
    long walkingNs;

    Walk(scala.collection.Iterator<Tuple2<String, byte[]>> heads, long generation, long startMs) {
      this.heads = heads;
      this.generation = generation;
      this.startMs = startMs;
      this.stepMs = startMs;
    }
  }

  /** The GroupStore of one call: reads through the cache, writes changed groups back at {@link #flush}. */
  final class Groups implements GroupStore {
    private final BucketStore store;
    private final MapState<String, byte[]> heads;
    private final GroupRows rows;
    private final Map<String, GroupWindow> dirty = new LinkedHashMap<>();
    private final Set<String> used = new HashSet<>();
    /** New groups of this call that the cache drops once written ({@link CacheAdmission}). */
    private final Set<String> dropped = new HashSet<>();
    private long cachedReads;
    private long loadedReads;
    private long resumedReads;
    private long absentReads;
    private long evicted;

    Groups(BucketStore store) {
      this.store = store;
      this.heads = store.heads();
      this.rows = store.groupRows();
    }

    @Override
    public GroupWindow get(String groupKey) {
      used.add(groupKey);
      Cached cached = windows.get(groupKey);
      if (cached != null) {
        cachedReads++;
        admission.read(groupKey, true);
        if (!dropped.isEmpty()) {
          dropped.remove(groupKey); // new in this call, and it recurred already
        }
        cached.window.attachPager(rows.pager(groupKey)); // this task's store
        return cached.window;
      }
      GroupWindow window = rows.load(groupKey);
      if (window != null) {
        if (window.resumed()) {
          resumedReads++;
        } else {
          loadedReads++;
        }
        admission.read(groupKey, true);
        cache(groupKey, window);
      } else {
        absentReads++;
        if (!admission.read(groupKey, false)) {
          dropped.add(groupKey);
        }
      }
      return window;
    }

    @Override
    public void put(String groupKey, GroupWindow window) {
      used.add(groupKey);
      written(window);
      Cached cached = windows.get(groupKey);
      if (cached == null || cached.window != window) {
        cache(groupKey, window);
      } // else weighed again at the flush, as every group the call used
      dirty.put(groupKey, window);
    }

    @Override
    public void delete(String groupKey) {
      rows.delete(groupKey);
      uncache(groupKey);
      dirty.remove(groupKey);
    }

    /**
     * Ends the call: writes what it changed ({@link #flush}), moves the sweep on ({@link #sweep}, with its pace), and
     * writes the rule set ({@link Engine#toBytes}) when {@code rulesChanged} (some rule record of the call was
     * applied) or a sweep finished. A restore from a rule set written before the call's clock only postpones the
     * sweep of a few groups. Returns whether a sweep finished.
     */
    boolean end(boolean rulesChanged, long nowMs, long sweepIntervalMs, int sweepSlice, double sweepTimeShare) {
      flush();
      if (rulesChanged) {
        rulesChanged();
      }
      boolean swept = sweep(nowMs, sweepIntervalMs, sweepSlice, sweepTimeShare);
      if (rulesChanged || swept) {
        store.setEngine(engine.toBytes());
      }
      return swept;
    }

    /**
     * Writes every changed group ({@link GroupRows#write}), drops the new groups the cache does not keep ({@link
     * CacheAdmission}), pages out the other groups this call used, trims the cache, keeping the snapshot of each
     * window it drops ({@link GroupRows#saveSnapshot}) so that reading it back reads none of its events.
     */
    void flush() {
      dirty.forEach(rows::write);
      dirty.clear();
      for (String groupKey : dropped) {
        uncache(groupKey);
      }
      dropped.clear();
      // Every group this call used (changed ones are now written) is paged out and weighed again.
      for (String groupKey : used) {
        Cached cached = windows.get(groupKey); // and last in access order
        if (cached != null) {
          cached.window.pageOut(false);
          weigh(cached);
        }
      }
      long budget = budgetBytes();
      // Access order puts the groups this call used last: eviction stops at the first of them.
      java.util.Iterator<Map.Entry<String, Cached>> eldest = windows.entrySet().iterator();
      while (cachedBytes > budget && eldest.hasNext()) {
        Map.Entry<String, Cached> entry = eldest.next();
        if (used.contains(entry.getKey())) {
          break;
        }
        rows.saveSnapshot(entry.getKey(), entry.getValue().window);
        eldest.remove();
        cachedBytes -= entry.getValue().bytes;
        evicted++;
      }
    }

    /** This call's reads and evictions so far. */
    CacheActivity activity() {
      return new CacheActivity(cachedReads, loadedReads, resumedReads, absentReads, evicted);
    }

    /**
     * Moves the bucket's sweep on, deleting the groups whose retention has passed on the engine's clock. A sweep is
     * due {@code intervalMs} after the last one finished (or after the cache was loaded) and walks every group in the
     * store once, a slice per call, so that no call holds up the records behind it for the whole walk: at least
     * {@code minSlice} groups a call, and then more while the call's walking time is within {@code timeShare} of the
     * processing time since the walk's last step. So a walk takes about that share of the task's time whatever a
     * group costs to read, and still ends within a task when calls are sparse. The walk reads the store as it was
     * when it began, so a group is deleted only if its current head is past retention too. The walk belongs to the
     * task that began it: a task that ends mid-walk leaves the sweep due, and the next task starts it over. Call it
     * after {@link #flush}. A due sweep whose bounds show that no group can be past its horizon ends at once,
     * without a walk. Returns whether a sweep finished in this call.
     */
    boolean sweep(long nowMs, long intervalMs, int minSlice, double timeShare) {
      if (walk == null || walk.generation != generation) {
        if (nowMs - lastSweepMs < intervalMs) {
          return false;
        }
        if (!mayHoldExpiredGroups()) {
          lastSweepMs = nowMs;
          return true;
        }
        walk = new Walk(heads.iterator(), generation, nowMs);
      }
      long startNs = System.nanoTime();
      long budgetNs = (long) (timeShare * Math.max(0, nowMs - walk.stepMs) * 1_000_000L);
      walk.stepMs = nowMs;
      for (long seen = 0;
          walk.heads.hasNext() && (seen < minSlice || System.nanoTime() - startNs < budgetNs);
          seen++) {
        walk.read++;
        Tuple2<String, byte[]> entry = walk.heads.next();
        Long newestMs = GroupRows.maxEventTimeMs(entry._2());
        List<String> keyGroup = sweptKeyGroups.get(entry._1());
        if (!engine.groupExpired(keyGroup, newestMs)) {
          walk.floorsMs.merge(keyGroup, newestMs, Math::min);
          continue;
        }
        // Past its horizon as the walk sees it; deleted if its current head is too. (A head that is no longer was
        // written since the walk began: it is in walk.writtenFloorMs.)
        byte[] head = heads.getValue(entry._1());
        if (head != null && engine.groupExpired(keyGroup, GroupRows.maxEventTimeMs(head))) {
          delete(entry._1());
          walk.deleted++;
        }
      }
      walk.walkingNs += System.nanoTime() - startNs;
      if (walk.heads.hasNext()) {
        return false;
      }
      LOG.info(
          "sweep of {}: read {} groups, deleted {}, walking {} ms over {} ms",
          cacheKey,
          walk.read,
          walk.deleted,
          walk.walkingNs / 1_000_000,
          nowMs - walk.startMs);
      lastSweepMs = nowMs;
      walkedFloorsMs = walk.trusted ? walk.floorsMs : null;
      writtenFloorMs = walk.writtenFloorMs;
      walk = null;
      return true;
    }
  }

  private void cache(String groupKey, GroupWindow window) {
    Cached cached = new Cached(window);
    Cached previous = windows.put(groupKey, cached);
    cachedBytes -= previous == null ? 0 : previous.bytes;
    weigh(cached);
  }

  private void uncache(String groupKey) {
    Cached cached = windows.remove(groupKey);
    cachedBytes -= cached == null ? 0 : cached.bytes;
  }

  private void weigh(Cached cached) {
    long bytes = cached.window.heapBytes();
    cachedBytes += bytes - cached.bytes;
    cached.bytes = bytes;
  }

  /** The heap the cached windows hold by their estimate ({@link GroupWindow#heapBytes}). */
  long cachedBytes() {
    return cachedBytes;
  }

  /** How many key groups this bucket's cache drops the new groups of after their call ({@link CacheAdmission}). */
  int droppingKeyGroups() {
    return admission.droppingKeyGroups();
  }

  /** This bucket's share of the JVM's cache budget: the budget split evenly over the buckets cached here. */
  long budgetBytes() {
    return cacheBytes / Math.max(1, CACHES.size());
  }
}
