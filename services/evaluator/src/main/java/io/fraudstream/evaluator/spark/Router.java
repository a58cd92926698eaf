package io.fraudstream.evaluator.spark;

import io.fraudstream.evaluator.core.RejectedRuleMessageException;
import io.fraudstream.evaluator.core.Routes;
import io.fraudstream.evaluator.core.Rule;
import java.util.BitSet;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.spark.SparkEnv;
import org.apache.spark.TaskContext;
import org.apache.spark.sql.api.java.UDF4;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The buckets each record of the detector's input goes to, computed in the source stage: a rule message goes to
 * every bucket; a transaction to those that own one of its groups, plus its reporter ({@link Routes}).
 *
 * <p>Contract: what routes is scoped to one run of the streaming query in this JVM (Spark's run id, which every
 * start of the query changes, restarts inside the same driver included). In each run, a transaction goes to every bucket until
 * this JVM knows every key group the buckets' rule sets hold: until each of the instance's buckets has, in this run
 * and JVM, claimed its state and read the rules topic up to where it ended when its task started ({@link
 * #caughtUp}). From then on, the key groups known are those of every bucket's rule set at that point and of every
 * rule message the source stage has read since, which it learns before that message goes on to the buckets ({@link
 * #call}); the routes only grow. So a transaction the source reads after a rule message reaches the buckets of its
 * groups in that rule's key group, as when every bucket received every transaction; one it read before may miss
 * them, as it may reach its bucket before the rule did (docs/detector.md, Arrival order). A rule published while the
 * query was down is behind the new run's catch-up barrier, like every rule before it. Routing is off (every
 * transaction to every bucket) when {@code enabled} is false: with a reorder wait, whose release counts on every
 * bucket seeing every partition's records, and with Spark executors, whose buckets and sources need not share a JVM.
 */
final class Router implements UDF4<Boolean, byte[], Integer, Long, int[]> {
  private static final long serialVersionUID = 1L;
  private static final Logger LOG = LoggerFactory.getLogger(Router.class);
  /**
   * The local property that tells a streaming query's runs apart in its tasks: Spark's stream execution makes each
   * run's id the job group of the run's jobs (it cancels them by it).
   */
  static final String RUN_PROPERTY = "spark.jobGroup.id";

  // The current run's directory per instance#buckets.
  private static final Map<String, Directory> DIRECTORIES = new ConcurrentHashMap<>();
  // The ids of the runs that have ended in this JVM (one per start of a query: a restart adds one).
  private static final Set<String> ENDED = ConcurrentHashMap.newKeySet();

  private final String instance;
  private final int buckets;
  private final boolean enabled;
  // Looked up once per deserialized copy (one per task), not once per record.
  private transient Directory directory;

  /** Routes records among {@code buckets} for the detector {@code instance}; all of them when not {@code enabled}. */
  Router(String instance, int buckets, boolean enabled) {
    this.instance = instance;
    this.buckets = buckets;
    this.enabled = enabled;
  }

  @Override
  public int[] call(Boolean isRule, byte[] value, Integer partition, Long offset) {
    if (directory == null) {
      directory = directory(instance, buckets, Run.current());
    }
    if (enabled) {
      directory.enable();
    }
    if (isRule) {
      directory.learn(value);
      return directory.routes.all();
    }
    return enabled ? directory.route(value, partition, offset) : directory.routes.all();
  }

  /**
   * Bucket {@code bucket} of {@code instance} has claimed its state in this JVM and caught up with the rules topic;
   * {@code keyGroups} are those of its rule set.
   */
  static void caughtUp(String instance, int buckets, int bucket, Collection<List<String>> keyGroups) {
    directory(instance, buckets, Run.current()).caughtUp(bucket, keyGroups);
  }

  /** A bucket of {@code instance} applied rules: {@code keyGroups} are those of its rule set now. */
  static void learn(String instance, int buckets, Collection<List<String>> keyGroups) {
    directory(instance, buckets, Run.current()).learn(keyGroups);
  }

  /**
   * The directory of {@code run}: a later run's first call starts a new one, which replaces the earlier run's. A
   * task of an earlier run that asks after that, and a task whose run is unknown ({@code null}), get one of their
   * own that never routes (a task of an earlier run that asked before keeps the one it has, which feeds only its own
   * run's buckets).
   */
  static Directory directory(String instance, int buckets, Run run) {
    if (run == null) {
      return Directory.stale(instance, buckets);
    }
    String key = instance + "#" + buckets;
    boolean[] started = {false};
    Directory current =
        DIRECTORIES.compute(
            key,
            (k, known) -> {
              if (known != null && !run.after(known.run)) {
                return known;
              }
              started[0] = true;
              return new Directory(key, instance, buckets, run);
            });
    if (started[0]) {
      publish(key, instance);
    }
    return current.run.same(run) ? current : Directory.stale(instance, buckets);
  }

  /**
   * The query's run {@code runId} has ended (stopped or failed): nothing is routed in it any more, so
   * fraud_routing_active falls to 0 until a later run's buckets have caught up. A later run that already replaced its
   * directory is left alone.
   */
  static void runEnded(String runId) {
    ENDED.add(runId);
    for (Map.Entry<String, Directory> entry : DIRECTORIES.entrySet()) {
      publish(entry.getKey(), entry.getValue().instance);
    }
  }

  /**
   * Sets fraud_routing_active from the instance's current directory. Every change of what it depends on (a new
   * directory, one ready with routing on, the end of a run) publishes after it, and publications are serial, so the
   * last one holds. A run's end is remembered, so a directory its lingering tasks start afterwards never reads 1.
   */
  private static synchronized void publish(String key, String instance) {
    Directory current = DIRECTORIES.get(key);
    EvaluatorMetrics.of(instance)
        .routing(current != null && current.ready && current.enabled && !ENDED.contains(current.run.id()));
  }

  /**
   * One run of the streaming query: the Spark application, the run's id, and the stage of the task that asked.
   * Stage ids only grow in a SparkContext, and a run starts after the previous one stopped, so every stage of a
   * later run is after every stage of an earlier one; a JVM has one SparkContext at a time, so a new application's
   * run is the later one.
   */
  record Run(String application, String id, int stage) {
    private static volatile boolean unknownLogged;

    /**
     * The calling task's run. Outside a Spark task (in-memory tests): the one run {@code ""}. In a task without a
     * job group (not a streaming query's, or a Spark that no longer sets it): {@code null}, so nothing routes.
     */
    static Run current() {
      TaskContext task = TaskContext.get();
      if (task == null) {
        return new Run("", "", 0);
      }
      String id = task.getLocalProperty(RUN_PROPERTY);
      if (id == null) {
        if (!unknownLogged) {
          unknownLogged = true;
          LOG.warn("task without {}: cannot tell the query's run, so every transaction goes to every bucket",
              RUN_PROPERTY);
        }
        return null;
      }
      SparkEnv env = SparkEnv.get();
      return new Run(env == null ? "" : env.conf().get("spark.app.id", ""), id, task.stageId());
    }

    boolean same(Run other) {
      return application.equals(other.application) && id.equals(other.id);
    }

    /** This is a later run than {@code other}. */
    boolean after(Run other) {
      return !application.equals(other.application) || (!id.equals(other.id) && stage > other.stage);
    }
  }

  /** What this JVM knows of one instance's key groups in one run of its query. */
  static final class Directory {
    private final String key;
    private final String instance;
    private final int buckets;
    private final Run run;
    private final boolean stale;
    private final BitSet caughtUp = new BitSet();
    private volatile Routes routes;
    private volatile boolean ready;
    private volatile boolean enabled;
    private boolean announced;

    private Directory(String key, String instance, int buckets, Run run, boolean stale) {
      this.key = key;
      this.instance = instance;
      this.buckets = buckets;
      this.run = run;
      this.stale = stale;
      this.routes = Routes.of(buckets, List.of());
    }

    /** A new run's directory, {@code DIRECTORIES}' entry {@code key}: nothing caught up yet. */
    Directory(String key, String instance, int buckets, Run run) {
      this(key, instance, buckets, run, false);
    }

    /** For a task of a replaced or unknown run: sends every transaction to every bucket, and never publishes. */
    static Directory stale(String instance, int buckets) {
      return new Directory(null, instance, buckets, null, true);
    }

    int[] route(byte[] value, int partition, long offset) {
      // ready before routes: once ready is seen, so are the routes written before it (with every bucket's groups).
      if (!ready) {
        return routes.all();
      }
      return routes.of(value, partition, offset);
    }

    void learn(byte[] ruleMessage) {
      Rule rule;
      try {
        rule = Rule.parseMessage(ruleMessage);
      } catch (RejectedRuleMessageException exc) {
        return; // the buckets refuse it too, and count it
      }
      if (rule != null) {
        learn(List.of(rule.spec().groupingKeyNames()));
      }
    }

    synchronized void learn(Collection<List<String>> keyGroups) {
      routes = routes.with(keyGroups);
    }

    synchronized void caughtUp(int bucket, Collection<List<String>> keyGroups) {
      learn(keyGroups);
      caughtUp.set(bucket);
      ready = !stale && caughtUp.cardinality() == buckets;
      announce();
    }

    /** A router with routing on runs in this JVM. */
    void enable() {
      if (!enabled) {
        synchronized (this) {
          enabled = true;
          announce();
        }
      }
    }

    /**
     * fraud_routing_active is 1 from when transactions are routed (routing on and every bucket caught up) until the
     * run ends.
     */
    private void announce() {
      if (ready && enabled && !announced) {
        announced = true;
        publish(key, instance);
      }
    }
  }
}
