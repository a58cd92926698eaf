package io.fraudstream.evaluator.spark;

import io.fraudstream.evaluator.core.Engine;
import io.fraudstream.evaluator.core.GroupRows;
import io.fraudstream.evaluator.core.GroupStore;
import io.fraudstream.evaluator.core.GroupWindow;
import io.fraudstream.evaluator.core.Harness;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * One bucket's state shell driven call by call, as {@link BucketProcessor} drives it, for the cross-language harness:
 * the real {@link BucketState} (its cache, its groups' deferred writes, paging and eviction; no sweep) over a {@link
 * BucketStore} in memory. A call claims the bucket, evaluates its records through {@link #engine} and {@link #groups},
 * and ends with {@link BucketState.Groups#end}, which writes what the call changed. A call may begin in another JVM,
 * one of three that take turns: its cache either never saw the bucket or holds it as of an older generation, so the
 * rule set and every group are read back from the store. (The JVMs' caches are shared by every BucketCalls, as
 * BucketState's are by every processor of a JVM; a new store's generation matches none of them.)
 */
public final class BucketCalls {
  private final MemoryMapState<String, byte[]> heads = new MemoryMapState<>();
  private final MemoryMapState<String, byte[]> rows = new MemoryMapState<>();
  private final BucketStore store = new BucketStore(heads, rows, new MemoryMapState<>());
  private final long latenessMs;
  private final long futureSkewMs;
  private final long cacheBytes;
  private int jvm;
  private BucketState state;
  private BucketState.Groups groups;
  private boolean rulesChanged;
  /** The groups the current call changed, as last changed. */
  private final Map<String, GroupWindow> written = new HashMap<>();
  private long nowMs = Long.MIN_VALUE;

  /** A bucket whose cache holds {@code cacheBytes} (1: only the groups of the current call; 0: the default). */
  public BucketCalls(long latenessMs, long futureSkewMs, long cacheBytes) {
    this.latenessMs = latenessMs;
    this.futureSkewMs = futureSkewMs;
    this.cacheBytes = cacheBytes;
  }

  /** Begins a call at processing time {@code atMs} (made non-decreasing), in another JVM if {@code anotherJvm}. */
  public void begin(long atMs, boolean anotherJvm) {
    jvm += anotherJvm ? 1 : 0;
    nowMs = Math.max(nowMs, atMs);
    state = BucketState.claim("harness-jvm-" + jvm % 3, store, latenessMs, futureSkewMs, cacheBytes, nowMs);
    groups = state.new Groups(store);
    rulesChanged = false;
  }

  /** The engine of the current call. */
  public Engine engine() {
    return state.engine();
  }

  /** The group store of the current call. */
  public GroupStore groups() {
    return new GroupStore() {
      @Override
      public GroupWindow get(String groupKey) {
        return groups.get(groupKey);
      }

      @Override
      public void put(String groupKey, GroupWindow window) {
        groups.put(groupKey, window);
        written.put(groupKey, window);
      }

      @Override
      public void delete(String groupKey) {
        groups.delete(groupKey);
        written.remove(groupKey);
      }
    };
  }

  /** Call when the engine applied a rule record in the current call. */
  public void ruleApplied() {
    rulesChanged = true;
  }

  /**
   * Ends the current call, as BucketProcessor does; then throws unless every group the call changed has as many
   * rows as its window needs ({@link Harness#checkRows}: none left of an evicted event or an empty slot) and no
   * event or bucket row is left of a group without a head (a deleted one).
   */
  public void end() {
    // Never a sweep: it forgets idle groups' newest event times, which CONTRACT section 6's lateness is measured
    // from (docs/detector.md, "What a sweep gives up"), so the oracle would see the difference; BucketStateTest
    // covers the sweep.
    groups.end(rulesChanged, nowMs, Long.MAX_VALUE, 1, 0.0);
    List<String> eventRows = untagged(rows.entries.keySet(), BucketStore.EVENT_TAG);
    List<String> bucketRows = untagged(rows.entries.keySet(), BucketStore.BUCKET_TAG);
    written.forEach((groupKey, window) -> Harness.checkRows(groupKey, window, eventRows, bucketRows));
    written.clear();
    for (List<String> groupRows : List.of(eventRows, bucketRows)) {
      for (String row : groupRows) {
        if (heads.entries.keySet().stream().noneMatch(groupKey -> GroupRows.belongsTo(row, groupKey))) {
          throw new IllegalStateException("row " + row + " is left of a group without a head");
        }
      }
    }
  }

  private static List<String> untagged(Collection<String> keys, char tag) {
    return keys.stream().filter(key -> key.charAt(0) == tag).map(key -> key.substring(1)).toList();
  }
}
