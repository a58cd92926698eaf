package io.fraudstream.evaluator.spark;

import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;

/** A bucket's {@link BucketStore} state in a Tester, read and written by what it holds rather than by its keys. */
final class StoredRows {
  private StoredRows() {}

  /** The rows under {@code tag} in the {@code rows} map, by their untagged keys. */
  static <K> Map<String, byte[]> tagged(Tester<K> tester, K key, char tag) {
    Map<String, byte[]> rows = new TreeMap<>();
    tester.<String, byte[]>map(BucketStore.ROWS, key).forEach((rowKey, value) -> {
      if (rowKey.length() > 1 && rowKey.charAt(0) == tag) {
        rows.put(rowKey.substring(1), value);
      }
    });
    return rows;
  }

  /** The stored generation; null if none. */
  static <K> Long generation(Tester<K> tester, K key) {
    return BucketStore.longOf(tester.<String, byte[]>map(BucketStore.ROWS, key).get(BucketStore.GENERATION_ROW));
  }

  static <K> void setGeneration(Tester<K> tester, K key, long generation) {
    put(tester, key, BucketStore.GENERATION_ROW, BucketStore.longBytes(generation));
  }

  static <K> void setEngine(Tester<K> tester, K key, byte[] engine) {
    put(tester, key, BucketStore.ENGINE_ROW, engine);
  }

  /** The last rules offset applied, per partition. */
  static <K> Map<Integer, Long> rulesOffsets(Tester<K> tester, K key) {
    Map<Integer, Long> offsets = new HashMap<>();
    tagged(tester, key, BucketStore.OFFSET_TAG)
        .forEach((partition, value) -> offsets.put(Integer.parseInt(partition), BucketStore.longOf(value)));
    return offsets;
  }

  /** The pending map's entries in one half: the reorder wait's ({@code awaitingRules} false) or the catch-up's. */
  static <K> Map<Long, byte[]> pending(Tester<K> tester, K key, boolean awaitingRules) {
    Map<Long, byte[]> held = new HashMap<>();
    tester.<Long, byte[]>map(BucketStore.PENDING, key).forEach((k, v) -> {
      if (k < 0 == awaitingRules) {
        held.put(k, v);
      }
    });
    return held;
  }

  private static <K> void put(Tester<K> tester, K key, String rowKey, byte[] value) {
    Map<String, byte[]> rows = new HashMap<>(tester.<String, byte[]>map(BucketStore.ROWS, key));
    rows.put(rowKey, value);
    tester.setMap(BucketStore.ROWS, key, rows);
  }
}
