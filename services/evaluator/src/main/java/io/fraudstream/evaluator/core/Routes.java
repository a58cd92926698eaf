package io.fraudstream.evaluator.core;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * Which buckets a transaction must reach, given the key groups it may be grouped by. No I/O; immutable.
 *
 * <p>Contract: {@link #of} returns, in ascending order and without repeats, the transaction's {@link #reporterOf
 * reporter} (which reports what concerns the whole transaction: evaluated, or its DLQ record) and the bucket of each
 * of its groups ({@link GroupKeys#bucketOf} of {@link GroupKeys#groupKey}) in the key groups given. A record that is
 * not a JSON object reaches its reporter alone. With every key group the engine knows among the given ones, the
 * buckets a transaction does not reach own none of its groups, so they would have done nothing with it but parse it.
 */
public final class Routes {
  private record KeyGroup(List<String> names, String keyPrefix) {}

  private final int buckets;
  private final List<KeyGroup> keyGroups;
  private final int[] all;

  private Routes(int buckets, List<KeyGroup> keyGroups) {
    this.buckets = buckets;
    this.keyGroups = keyGroups;
    this.all = new int[buckets];
    for (int bucket = 0; bucket < buckets; bucket++) {
      all[bucket] = bucket;
    }
  }

  /** The routes among {@code buckets} (at least 1) for the key groups {@code keyGroups} (each a list of names). */
  public static Routes of(int buckets, Collection<List<String>> keyGroups) {
    if (buckets < 1) {
      throw new IllegalArgumentException("buckets must be >= 1, got " + buckets);
    }
    TreeSet<List<String>> sorted = new TreeSet<>(CodePointOrder::compareStringLists);
    sorted.addAll(keyGroups);
    List<KeyGroup> groups = new ArrayList<>();
    for (List<String> names : sorted) {
      List<String> copy = List.copyOf(names);
      groups.add(new KeyGroup(copy, GroupKeys.keyPrefix(copy)));
    }
    return new Routes(buckets, List.copyOf(groups));
  }

  /** These routes plus the key groups {@code more}; this if it holds them all already. */
  public Routes with(Collection<List<String>> more) {
    List<List<String>> names = keyGroups();
    if (names.containsAll(more)) {
      return this;
    }
    List<List<String>> union = new ArrayList<>(names);
    union.addAll(more);
    return of(buckets, union);
  }

  /** The key groups these routes follow. */
  public List<List<String>> keyGroups() {
    return keyGroups.stream().map(KeyGroup::names).toList();
  }

  /** Every bucket, ascending: where a record goes when its routes are not known. Callers must not modify it. */
  public int[] all() {
    return all;
  }

  /** The bucket that reports the transaction at {@code partition} and {@code offset} (offsets spread over buckets). */
  public static int reporterOf(int partition, long offset, int buckets) {
    return Math.floorMod(31 * partition + Long.hashCode(offset), buckets);
  }

  /** The buckets the transaction with the record value {@code value} at {@code partition}, {@code offset} reaches. */
  public int[] of(byte[] value, int partition, long offset) {
    int reporter = reporterOf(partition, offset, buckets);
    if (buckets == 1) {
      return all;
    }
    Object parsed;
    try {
      parsed = value == null ? null : Json.parse(value);
    } catch (JsonValueException exc) {
      parsed = null;
    }
    boolean[] reached = new boolean[buckets];
    reached[reporter] = true;
    int count = 1;
    if (parsed instanceof Map<?, ?> map) {
      @SuppressWarnings("unchecked")
      Map<String, Object> fields = (Map<String, Object>) map;
      for (int i = 0; i < keyGroups.size() && count < buckets; i++) { // indexed: no iterator per transaction
        KeyGroup group = keyGroups.get(i);
        String key = GroupKeys.groupKey(group.keyPrefix(), group.names(), fields);
        if (key != null) {
          int bucket = GroupKeys.bucketOf(key, buckets);
          count += reached[bucket] ? 0 : 1;
          reached[bucket] = true;
        }
      }
    }
    if (count == buckets) {
      return all;
    }
    int[] out = new int[count];
    for (int bucket = 0, i = 0; bucket < buckets; bucket++) {
      if (reached[bucket]) {
        out[i++] = bucket;
      }
    }
    return out;
  }
}
