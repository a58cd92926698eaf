package io.fraudstream.evaluator.spark;

import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.spark.sql.ForeachWriter;
import org.apache.spark.sql.Row;

/**
 * Publishes the evaluator's output rows (alerts and DLQ records) the moment they are produced.
 *
 * <p>Contract: one idempotent producer (acks=all) per JVM and configuration sends every row; an alert's latency is
 * observed when the broker acknowledges it. A task's output that Kafka did not acknowledge fails the task at
 * {@code close}, so the query restarts from its checkpoint and replays (at-least-once; alert ids are deterministic).
 */
public final class OutputWriter extends ForeachWriter<Row> {
  private static final long serialVersionUID = 1L;
  private static final Map<Map<String, String>, Producer<byte[], byte[]>> PRODUCERS = new ConcurrentHashMap<>();

  private final Map<String, String> producerConfig;
  private final String alertsTopic;
  private final String dlqTopic;
  private final String instance;
  private transient Producer<byte[], byte[]> producer;
  private transient EvaluatorMetrics metrics;
  private transient AtomicReference<Exception> failure;

  /** {@code kafkaOptions} are the Spark Kafka options ({@code kafka.}-prefixed client properties). */
  public OutputWriter(Map<String, String> kafkaOptions, String alertsTopic, String dlqTopic, String instance) {
    Map<String, String> config = KafkaClients.clientConfig(kafkaOptions);
    config.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
    config.put(ProducerConfig.ACKS_CONFIG, "all");
    config.put(ProducerConfig.LINGER_MS_CONFIG, "0");
    this.producerConfig = Map.copyOf(config);
    this.alertsTopic = alertsTopic;
    this.dlqTopic = dlqTopic;
    this.instance = instance;
  }

  private static Producer<byte[], byte[]> producerFor(Map<String, String> config) {
    return PRODUCERS.computeIfAbsent(
        config,
        settings -> {
          Map<String, Object> props = new HashMap<>(settings);
          return new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer());
        });
  }

  @Override
  public boolean open(long partitionId, long epochId) {
    producer = producerFor(producerConfig);
    metrics = EvaluatorMetrics.of(instance);
    failure = new AtomicReference<>();
    return true;
  }

  @Override
  public void process(Row row) {
    Exception failed = failure.get();
    if (failed != null) {
      throw new IllegalStateException("Kafka did not acknowledge the evaluator's output", failed);
    }
    OutputRow out = OutputRow.of(row);
    if (out.isAlert()) {
      String ruleId = out.ruleId();
      long transactionTsMs = out.transactionTsMs();
      producer.send(
          new ProducerRecord<>(alertsTopic, null, null, out.key(), out.value()),
          (metadata, error) -> {
            if (error != null) {
              failure.compareAndSet(null, error);
            } else {
              metrics.alertAcknowledged(ruleId, Math.max(0, System.currentTimeMillis() - transactionTsMs));
            }
          });
      return;
    }
    RecordHeaders headers = new RecordHeaders();
    headers.add("error", out.error().getBytes(StandardCharsets.UTF_8));
    headers.add("source.topic", out.sourceTopic().getBytes(StandardCharsets.UTF_8));
    headers.add("source.partition", Integer.toString(out.sourcePartition()).getBytes(StandardCharsets.UTF_8));
    headers.add("source.offset", Long.toString(out.sourceOffset()).getBytes(StandardCharsets.UTF_8));
    String error = out.error();
    producer.send(
        new ProducerRecord<>(dlqTopic, null, null, out.key(), out.value(), headers),
        (metadata, sendError) -> {
          if (sendError != null) {
            failure.compareAndSet(null, sendError);
          } else {
            metrics.dlq(error);
          }
        });
  }

  @Override
  public void close(Throwable errorOrNull) {
    if (producer == null) {
      return;
    }
    producer.flush();
    Exception failed = failure.get();
    if (errorOrNull == null && failed != null) {
      throw new IllegalStateException("Kafka did not acknowledge the evaluator's output", failed);
    }
  }
}
