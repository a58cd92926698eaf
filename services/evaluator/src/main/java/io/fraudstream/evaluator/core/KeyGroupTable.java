package io.fraudstream.evaluator.core;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/**
 * One value per key group, found from any of its group keys.
 *
 * <p>Contract: for a group key as {@link GroupKeys#groupKey} writes it, {@link #get} answers the value of its key
 * group ({@link GroupKeys#keyGroupOf}), made by the table's factory the first time that key group is seen. A table
 * that has seen {@code capacity} key groups and meets another forgets them all first (rule churn), so a value can be
 * made again for a key group seen before; beyond {@code capacity} key groups in use, keys are parsed again and
 * again. Not thread-safe.
 *
 * <p>Why: a key is matched against the key groups already seen by its prefix ({@link GroupKeys#keyPrefix}), which
 * is exact, since a key group's names are one JSON array and no JSON array is a proper prefix of another; only a
 * key group's first key is parsed. The sweep's walk over every group in the store parsed each key as JSON to find
 * its key group; the cache's admission matched prefixes already, and both share this table now.
 */
public final class KeyGroupTable<V> {
  private record Entry<V>(String prefix, V value) {}

  private final int capacity;
  private final Function<List<String>, V> factory;
  private final List<Entry<V>> entries = new ArrayList<>();

  /** A table of at most {@code capacity} key groups whose values {@code factory} makes from the key group's names. */
  public KeyGroupTable(int capacity, Function<List<String>, V> factory) {
    if (capacity < 1) {
      throw new IllegalArgumentException("capacity must be at least 1: " + capacity);
    }
    this.capacity = capacity;
    this.factory = factory;
  }

  /**
   * The value of {@code groupKey}'s key group. A string that is not a group key gets IllegalArgumentException if it
   * starts with no known key group's prefix, and that key group's value if it does.
   */
  public V get(String groupKey) {
    for (int i = 0; i < entries.size(); i++) { // indexed: no iterator per key
      Entry<V> entry = entries.get(i);
      if (groupKey.startsWith(entry.prefix)) {
        return entry.value;
      }
    }
    List<String> keyGroup = GroupKeys.keyGroupOf(groupKey);
    if (entries.size() >= capacity) {
      entries.clear();
    }
    Entry<V> entry = new Entry<>(GroupKeys.keyPrefix(keyGroup), factory.apply(keyGroup));
    entries.add(entry);
    return entry.value;
  }

  /** The values of the key groups seen since the table was made or last forgot, in the order first seen. */
  public List<V> values() {
    List<V> values = new ArrayList<>(entries.size());
    for (Entry<V> entry : entries) {
      values.add(entry.value);
    }
    return values;
  }
}
