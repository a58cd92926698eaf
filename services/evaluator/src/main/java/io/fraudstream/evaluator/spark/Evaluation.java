package io.fraudstream.evaluator.spark;

import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.concat_ws;
import static org.apache.spark.sql.functions.explode;
import static org.apache.spark.sql.functions.udf;
import static org.apache.spark.sql.functions.when;

import java.util.List;
import java.util.Map;
import org.apache.spark.api.java.function.MapFunction;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.expressions.UserDefinedFunction;
import org.apache.spark.sql.streaming.OutputMode;
import org.apache.spark.sql.streaming.TimeMode;
import org.apache.spark.sql.types.DataTypes;

/**
 * The detector query's two JVM stages, between the Kafka sources and the writer that the PySpark driver sets up
 * (services/detector/pipeline.py): Real-time Mode admits no Python operator, so these stay in the JVM.
 *
 * <p>{@link BucketProcessor} evaluates each bucket's records in a {@code transformWithState}; {@link
 * TransactionReports} (a second {@code transformWithState}, keyed by the transaction, or by rule for alerts) reports
 * each transaction once. {@link OutputWriter} then publishes the reported rows.
 */
public final class Evaluation {
  /**
   * The input's columns, in this order: the Kafka records of the transactions and the rules topic ({@code rule} is
   * true for the latter, {@code timestamp_ms} is the Kafka timestamp), each once per bucket ({@code bucket}, 0 to
   * buckets - 1). {@link InputRecord#of} reads them by position.
   */
  public static final List<String> INPUT_COLUMNS =
      List.of("rule", "key", "value", "topic", "partition", "offset", "timestamp_ms", "bucket");

  private Evaluation() {}

  /**
   * {@code records}, the Kafka records of both topics in the columns {@link #INPUT_COLUMNS} but {@code bucket}, with
   * the {@code bucket} column: each rule message once per bucket, each transaction once per bucket {@link Router}
   * sends it to. {@code settings} holds: checkpointDir, buckets, routeTransactions ("true": route; else every bucket).
   * The session's query runs that end are reported to the router from then on ({@link RunEnds}).
   */
  public static Dataset<Row> withBuckets(Dataset<Row> records, Map<String, String> settings) {
    RunEnds.watch(records.sparkSession());
    Router router =
        new Router(
            settings.get("checkpointDir"),
            Integer.parseInt(settings.get("buckets")),
            Boolean.parseBoolean(settings.get("routeTransactions")));
    // Nondeterministic: the routes depend on what the JVM has learned, and the function learns from rule messages.
    UserDefinedFunction route =
        udf(router, DataTypes.createArrayType(DataTypes.IntegerType, false)).asNondeterministic();
    return records.withColumn(
        "bucket", explode(route.apply(col("rule"), col("value"), col("partition"), col("offset"))));
  }

  /**
   * The reported rows ({@link OutputRow#SCHEMA}) of {@code input}, a stream with the columns {@link #INPUT_COLUMNS}.
   * {@code kafkaOptions} are the Spark Kafka options (bootstrap servers, security), which the rules catch-up reads
   * the rules topic with; {@code settings} holds: rulesTopic, checkpointDir, buckets, latenessMs, futureSkewMs,
   * reorderWaitMs, sweepIntervalMs, rulesCatchUpTimeoutMs, stateCacheBytes (0: a quarter of the JVM's heap).
   * Throws IllegalArgumentException when the input's columns are not {@link #INPUT_COLUMNS}.
   */
  public static Dataset<Row> evaluate(
      Dataset<Row> input, Map<String, String> kafkaOptions, Map<String, String> settings) {
    List<String> columns = List.of(input.columns());
    if (!columns.equals(INPUT_COLUMNS)) {
      throw new IllegalArgumentException("the input's columns must be " + INPUT_COLUMNS + ", got " + columns);
    }
    String checkpointDir = settings.get("checkpointDir");
    BucketProcessor processor =
        new BucketProcessor(
            new BucketProcessor.Settings(
                Integer.parseInt(settings.get("buckets")),
                Long.parseLong(settings.get("latenessMs")),
                Long.parseLong(settings.get("futureSkewMs")),
                Long.parseLong(settings.get("reorderWaitMs")),
                Long.parseLong(settings.get("sweepIntervalMs")),
                Long.parseLong(settings.getOrDefault("stateCacheBytes", "0"))),
            checkpointDir,
            new RulesTopic(
                KafkaClients.clientConfig(kafkaOptions),
                settings.get("rulesTopic"),
                Long.parseLong(settings.get("rulesCatchUpTimeoutMs"))));
    // Each bucket is keyed by one that lands in a state partition of its own (BucketKeys); the buckets are as many
    // as the state partitions. The key's type changes with the state's layout, so Spark refuses a checkpoint of an
    // earlier layout instead of misreading it.
    String[] keys = BucketKeys.keys(Integer.parseInt(settings.get("buckets")));
    Dataset<Row> evaluated =
        input
            .groupByKey((MapFunction<Row, String>) row -> keys[row.getInt(7)], Encoders.STRING())
            .transformWithState(
                processor, processor.timeMode(), OutputMode.Update(), Encoders.row(OutputRow.SCHEMA));
    // The report key is a column of its own (a projection), which also keeps Spark from fusing the second
    // groupByKey into the first operator's output (Real-time Mode does not admit that fused operator).
    return evaluated
        .withColumn(
            "report_key",
            when(col("kind").equalTo(OutputRow.Kind.ALERT.name()), col("rule_id"))
                .otherwise(
                    concat_ws(
                        ":",
                        col("source_topic"),
                        col("source_partition").cast("string"),
                        col("source_offset").cast("string"))))
        .groupByKey((MapFunction<Row, String>) row -> row.getString(10), Encoders.STRING())
        .transformWithState(
            new TransactionReports(checkpointDir),
            TimeMode.ProcessingTime(),
            OutputMode.Update(),
            Encoders.row(OutputRow.SCHEMA));
  }
}
