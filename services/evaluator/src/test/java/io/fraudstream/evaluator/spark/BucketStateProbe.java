package io.fraudstream.evaluator.spark;

import java.util.List;
import java.util.function.Consumer;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.streaming.OutputMode;
import org.apache.spark.sql.streaming.StatefulProcessor;
import org.apache.spark.sql.streaming.TimeMode;
import org.apache.spark.sql.streaming.TimerValues;
import scala.collection.Iterator;
import scala.jdk.javaapi.CollectionConverters;

/**
 * A processor that declares the state BucketProcessor keeps a bucket's detector in and runs a test's step on it
 * inside a TwsTester call (where one bucket's state is in scope), so that BucketState is driven directly.
 */
final class BucketStateProbe extends StatefulProcessor<Integer, Row, Row> {
  private static final long serialVersionUID = 1L;

  private transient BucketStore store;
  private transient Consumer<BucketStore> step;

  @Override
  public void init(OutputMode outputMode, TimeMode timeMode) {
    store = BucketStore.declare(getHandle());
  }

  @Override
  public Iterator<Row> handleInputRows(Integer bucket, Iterator<Row> rows, TimerValues timerValues) {
    step.accept(store);
    List<Row> none = List.of();
    return CollectionConverters.asScala(none.iterator());
  }

  /** Runs {@code step} with {@code bucket}'s state, in {@code tester} (which runs this probe). */
  void run(Tester<Integer> tester, int bucket, Consumer<BucketStore> step) {
    this.step = step;
    tester.test(bucket, List.of());
  }
}
