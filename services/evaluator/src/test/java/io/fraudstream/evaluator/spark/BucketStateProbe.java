package io.fraudstream.evaluator.spark;

import java.util.List;
import java.util.function.Consumer;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.streaming.MapState;
import org.apache.spark.sql.streaming.OutputMode;
import org.apache.spark.sql.streaming.StatefulProcessor;
import org.apache.spark.sql.streaming.TTLConfig;
import org.apache.spark.sql.streaming.TimeMode;
import org.apache.spark.sql.streaming.TimerValues;
import org.apache.spark.sql.streaming.ValueState;
import scala.collection.Iterator;
import scala.jdk.javaapi.CollectionConverters;

/**
 * A processor that declares the state BucketProcessor keeps a bucket's detector in and runs a test's step on it
 * inside a TwsTester call (where one bucket's state is in scope), so that BucketState is driven directly.
 */
final class BucketStateProbe extends StatefulProcessor<Integer, Row, Row> {
  private static final long serialVersionUID = 1L;

  /** One bucket's state handles. */
  record Handles(
      ValueState<Long> generation,
      ValueState<byte[]> engine,
      MapState<String, byte[]> heads,
      MapState<String, byte[]> events,
      MapState<String, byte[]> buckets) {}

  private transient Handles handles;
  private transient Consumer<Handles> step;

  @Override
  public void init(OutputMode outputMode, TimeMode timeMode) {
    handles =
        new Handles(
            getHandle().getValueState("generation", Encoders.LONG(), TTLConfig.NONE()),
            getHandle().getValueState("engine", Encoders.BINARY(), TTLConfig.NONE()),
            getHandle().getMapState("heads", Encoders.STRING(), Encoders.BINARY(), TTLConfig.NONE()),
            getHandle().getMapState("events", Encoders.STRING(), Encoders.BINARY(), TTLConfig.NONE()),
            getHandle().getMapState("buckets", Encoders.STRING(), Encoders.BINARY(), TTLConfig.NONE()));
  }

  @Override
  public Iterator<Row> handleInputRows(Integer bucket, Iterator<Row> rows, TimerValues timerValues) {
    step.accept(handles);
    List<Row> none = List.of();
    return CollectionConverters.asScala(none.iterator());
  }

  /** Runs {@code step} with {@code bucket}'s state, in {@code tester} (which runs this probe). */
  void run(Tester<Integer> tester, int bucket, Consumer<Handles> step) {
    this.step = step;
    tester.test(bucket, List.of());
  }
}
