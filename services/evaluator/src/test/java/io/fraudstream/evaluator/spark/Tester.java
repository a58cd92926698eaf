package io.fraudstream.evaluator.spark;

import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.streaming.OutputMode;
import org.apache.spark.sql.streaming.StatefulProcessor;
import org.apache.spark.sql.streaming.TimeMode;
import org.apache.spark.sql.streaming.TwsTester;
import scala.Option;
import scala.Tuple2;
import scala.jdk.javaapi.CollectionConverters;

/** Spark's TwsTester for a processor of Rows, with Java collections in and out. */
final class Tester<K> {
  final TwsTester<K, Row, Row> tws;

  Tester(StatefulProcessor<K, Row, Row> processor, TimeMode timeMode) {
    List<Tuple2<K, Object>> noInitialState = List.of();
    tws =
        new TwsTester<>(
            processor,
            CollectionConverters.asScala(noInitialState).toList(),
            timeMode,
            OutputMode.Update(),
            Option.empty());
  }

  /** The processor's output for {@code rows} of {@code key}, read back as output rows. */
  List<OutputRow> test(K key, List<Row> rows) {
    return outputs(tws.test(key, CollectionConverters.asScala(rows).toList()));
  }

  List<OutputRow> test(K key, Row... rows) {
    return test(key, Arrays.asList(rows));
  }

  /** Moves processing time to {@code ms} and returns what the expired timers emitted. */
  List<OutputRow> setProcessingTime(long ms) {
    return outputs(tws.setProcessingTime(ms));
  }

  <T> T value(String state, K key) {
    Option<T> value = tws.peekValueState(state, key);
    return value.isDefined() ? value.get() : null;
  }

  <MK, MV> Map<MK, MV> map(String state, K key) {
    scala.collection.immutable.Map<MK, MV> entries = tws.peekMapState(state, key);
    return CollectionConverters.asJava(entries);
  }

  <T> void setValue(String state, K key, T value) {
    tws.updateValueState(state, key, value);
  }

  <MK, MV> void setMap(String state, K key, Map<MK, MV> entries) {
    scala.collection.immutable.Map<MK, MV> scalaMap = scala.collection.immutable.Map$.MODULE$.empty();
    for (Map.Entry<MK, MV> entry : entries.entrySet()) {
      scalaMap = scalaMap.updated(entry.getKey(), entry.getValue());
    }
    tws.updateMapState(state, key, scalaMap);
  }

  private static List<OutputRow> outputs(scala.collection.immutable.List<Row> rows) {
    return CollectionConverters.asJava(rows).stream().map(OutputRow::of).toList();
  }
}
