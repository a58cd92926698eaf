package io.fraudstream.evaluator.spark;

import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.concat_ws;
import static org.apache.spark.sql.functions.explode;
import static org.apache.spark.sql.functions.lit;
import static org.apache.spark.sql.functions.sequence;
import static org.apache.spark.sql.functions.unix_millis;
import static org.apache.spark.sql.functions.when;

import java.util.Map;
import java.util.concurrent.TimeoutException;
import org.apache.spark.api.java.function.MapFunction;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.streaming.DataStreamReader;
import org.apache.spark.sql.streaming.DataStreamWriter;
import org.apache.spark.sql.streaming.OutputMode;
import org.apache.spark.sql.streaming.StreamingQuery;
import org.apache.spark.sql.streaming.TimeMode;
import org.apache.spark.sql.streaming.Trigger;

/**
 * The detector's streaming query with the JVM evaluator, started from the PySpark driver.
 *
 * <p>Transactions and rule messages (the compacted rules topic, read from its beginning) are fanned out to every
 * bucket, evaluated by {@link BucketProcessor} in a JVM {@code transformWithState}, reported once per transaction by
 * {@link TransactionReports} (a second {@code transformWithState}, keyed by the transaction, or by rule for alerts),
 * and published by {@link OutputWriter}. Under Real-time Mode (the default) every stage runs as a long-lived task
 * and each record flows through as it arrives; the trigger's interval is how often progress and state are
 * checkpointed. The query needs one task slot per source partition plus one per bucket and one per report partition.
 */
public final class RealTimeDetector {
  private RealTimeDetector() {}

  /**
   * Starts the query. {@code kafkaOptions} are the Spark Kafka options (bootstrap servers, security);
   * {@code settings} holds: transactionsTopic, rulesTopic, alertsTopic, dlqTopic, checkpointDir, startingOffsets,
   * buckets, latenessMs, futureSkewMs, reorderWaitMs, sweepIntervalMs, rulesCatchUpTimeoutMs, maxRequestBytes,
   * queryName, trigger ("realtime:&lt;interval&gt;" or "microbatch:&lt;interval&gt;").
   */
  public static StreamingQuery start(
      SparkSession spark, Map<String, String> kafkaOptions, Map<String, String> settings) throws TimeoutException {
    int buckets = Integer.parseInt(settings.get("buckets"));
    String checkpointDir = settings.get("checkpointDir");
    Dataset<Row> transactions =
        records(spark, kafkaOptions, settings.get("transactionsTopic"), settings.get("startingOffsets"), false);
    Dataset<Row> rules = records(spark, kafkaOptions, settings.get("rulesTopic"), "earliest", true);
    Dataset<Row> fanned =
        transactions.union(rules).withColumn("bucket", explode(sequence(lit(0), lit(buckets - 1))));
    BucketProcessor processor =
        new BucketProcessor(
            new BucketProcessor.Settings(
                buckets,
                Long.parseLong(settings.get("latenessMs")),
                Long.parseLong(settings.get("futureSkewMs")),
                Long.parseLong(settings.get("reorderWaitMs")),
                Long.parseLong(settings.get("sweepIntervalMs"))),
            checkpointDir,
            new RulesTopic(
                KafkaClients.clientConfig(kafkaOptions),
                settings.get("rulesTopic"),
                Long.parseLong(settings.get("rulesCatchUpTimeoutMs"))));
    Dataset<Row> evaluated =
        fanned
            .groupByKey((MapFunction<Row, Integer>) row -> row.getInt(7), Encoders.INT())
            .transformWithState(
                processor, processor.timeMode(), OutputMode.Update(), Encoders.row(OutputRow.SCHEMA));
    // The report key is a column of its own (a projection), which also keeps Spark from fusing the second
    // groupByKey into the first operator's output (Real-time Mode does not admit that fused operator).
    Dataset<Row> reported =
        evaluated
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
    DataStreamWriter<Row> writer =
        reported
            .writeStream()
            .queryName(settings.get("queryName"))
            .foreach(
                new OutputWriter(
                    kafkaOptions,
                    settings.get("alertsTopic"),
                    settings.get("dlqTopic"),
                    checkpointDir,
                    Integer.parseInt(settings.get("maxRequestBytes"))))
            .option("checkpointLocation", checkpointDir)
            .outputMode(OutputMode.Update())
            .trigger(trigger(settings.get("trigger")));
    return writer.start();
  }

  static Trigger trigger(String spec) {
    int colon = spec.indexOf(':');
    String mode = colon < 0 ? spec : spec.substring(0, colon);
    String interval = colon < 0 ? "" : spec.substring(colon + 1).trim();
    return switch (mode) {
      case "realtime" -> Trigger.RealTime(interval.isEmpty() ? "5 minutes" : interval);
      case "microbatch" -> Trigger.ProcessingTime(interval.isEmpty() ? "0 seconds" : interval);
      default -> throw new IllegalArgumentException(
          "trigger must be realtime:<interval> or microbatch:<interval>, got " + spec);
    };
  }

  private static Dataset<Row> records(
      SparkSession spark, Map<String, String> kafkaOptions, String topic, String startingOffsets, boolean rules) {
    DataStreamReader reader = spark.readStream().format("kafka").options(kafkaOptions);
    return reader
        .option("subscribe", topic)
        .option("startingOffsets", startingOffsets)
        .option("failOnDataLoss", "false")
        .load()
        .select(
            lit(rules).alias("rule"),
            col("key"),
            col("value"),
            col("topic"),
            col("partition"),
            col("offset"),
            unix_millis(col("timestamp")).alias("timestamp_ms"));
  }
}
