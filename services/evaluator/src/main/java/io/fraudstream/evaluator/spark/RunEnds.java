package io.fraudstream.evaluator.spark;

import java.util.Collections;
import java.util.Set;
import java.util.WeakHashMap;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.streaming.StreamingQueryListener;

/**
 * Tells the {@link Router} of this JVM when a run of a streaming query ends (stopped or failed), so that
 * fraud_routing_active reads 0 while the query is down. Routing applies only with a local master, where the driver
 * that hears of the end and the router share the JVM.
 */
final class RunEnds extends StreamingQueryListener {
  private static final Set<SparkSession> WATCHED = Collections.newSetFromMap(new WeakHashMap<>());

  private RunEnds() {}

  /** Listens to {@code session}'s queries, once however often it is asked. */
  static synchronized void watch(SparkSession session) {
    if (WATCHED.add(session)) {
      session.streams().addListener(new RunEnds());
    }
  }

  @Override
  public void onQueryStarted(QueryStartedEvent event) {}

  @Override
  public void onQueryProgress(QueryProgressEvent event) {}

  @Override
  public void onQueryTerminated(QueryTerminatedEvent event) {
    Router.runEnded(event.runId().toString());
  }
}
