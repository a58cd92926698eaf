package io.fraudstream.evaluator.spark;

import java.util.Map;
import java.util.TreeMap;
import org.apache.spark.sql.streaming.MapState;
import scala.Tuple2;
import scala.jdk.javaapi.CollectionConverters;

/**
 * A MapState in a sorted memory map, for tests of classes that keep records in one (no Spark needed). Its iterators,
 * like RocksDB's, see the map as it was when they were made; {@link #iterations} counts them.
 */
final class MemoryMapState<K extends Comparable<K>, V> implements MapState<K, V> {
  private static final long serialVersionUID = 1L;

  final Map<K, V> entries = new TreeMap<>();
  int iterations;

  @Override
  public boolean exists() {
    return !entries.isEmpty();
  }

  @Override
  public V getValue(K key) {
    return entries.get(key);
  }

  @Override
  public boolean containsKey(K key) {
    return entries.containsKey(key);
  }

  @Override
  public void updateValue(K key, V value) {
    entries.put(key, value);
  }

  @Override
  public scala.collection.Iterator<Tuple2<K, V>> iterator() {
    iterations++;
    return CollectionConverters.asScala(
        entries.entrySet().stream().map(e -> new Tuple2<>(e.getKey(), e.getValue())).toList().iterator());
  }

  @Override
  public scala.collection.Iterator<K> keys() {
    return CollectionConverters.asScala(entries.keySet().stream().toList().iterator());
  }

  @Override
  public scala.collection.Iterator<V> values() {
    return CollectionConverters.asScala(entries.values().stream().toList().iterator());
  }

  @Override
  public void removeKey(K key) {
    entries.remove(key);
  }

  @Override
  public void clear() {
    entries.clear();
  }
}
