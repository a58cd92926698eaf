package io.fraudstream.evaluator.spark;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.producer.Callback;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.InvalidRecordException;
import org.apache.kafka.common.errors.RecordBatchTooLargeException;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.record.AbstractRecords;
import org.apache.kafka.common.record.CompressionType;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.spark.sql.ForeachWriter;
import org.apache.spark.sql.Row;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Publishes the evaluator's output rows (alerts and DLQ records) the moment they are produced.
 *
 * <p>Contract: one idempotent producer (acks=all) per JVM and configuration sends every row; an alert's latency is
 * observed when the broker acknowledges it. A broker outage is waited out: sends are retried for as long as it lasts
 * and block when the producer's buffer is full, so no output is dropped and the task does not fail for it. An output
 * Kafka refuses for good (larger than its topic takes, or malformed for the broker) is passed over: counted as
 * {@code fraud_dlq_records_total{error="unwritable"}} and logged with the coordinates of its transaction, and the
 * stream goes on. Any other refusal fails the task at its next row or at {@code close}, so the query restarts from
 * its checkpoint and replays (at-least-once; alert ids are deterministic); a producer that reported such an error is
 * replaced, never reused, since it may be in a fatal state.
 *
 * <p>Outputs go uncompressed, adding nothing to the alerts' path, unless one is larger than {@code max.request.size}
 * uncompressed: a transaction may come compressed, and fit its topic only so. Such an output goes lz4-compressed
 * through a second producer that takes records of up to {@link #LARGE_RECORD_BYTES} uncompressed (or {@code
 * max.request.size}, if larger), since the broker bounds a compressed batch by its compressed size; it may be
 * written after later outputs of the same key. An output that is larger even compressed, or larger than that, is
 * unwritable. Until the broker acknowledges an output, the writer keeps its description, not its bytes.
 */
public final class OutputWriter extends ForeachWriter<Row> {
  private static final long serialVersionUID = 1L;
  private static final Logger LOG = LoggerFactory.getLogger(OutputWriter.class);
  private static final Map<Map<String, String>, Producer<byte[], byte[]>> PRODUCERS = new ConcurrentHashMap<>();
  /** The largest output sent at all, uncompressed: 64 MiB. */
  static final int LARGE_RECORD_BYTES = 64 << 20;

  private final Map<String, String> producerConfig;
  private final Map<String, String> largeRecordConfig;
  private final int maxRequestBytes;
  private final String alertsTopic;
  private final String dlqTopic;
  private final String instance;
  private transient Producer<byte[], byte[]> producer;
  private transient Producer<byte[], byte[]> largeRecordProducer;
  private transient EvaluatorMetrics metrics;
  private transient AtomicReference<Exception> failure;

  /**
   * {@code kafkaOptions} are the Spark Kafka options ({@code kafka.}-prefixed client properties); {@code
   * maxRequestBytes} is the producer's {@code max.request.size}, which the topics' {@code max.message.bytes} bound.
   */
  public OutputWriter(
      Map<String, String> kafkaOptions, String alertsTopic, String dlqTopic, String instance, int maxRequestBytes) {
    Map<String, String> config = KafkaClients.clientConfig(kafkaOptions);
    config.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
    config.put(ProducerConfig.ACKS_CONFIG, "all");
    config.put(ProducerConfig.LINGER_MS_CONFIG, "0");
    config.put(ProducerConfig.MAX_REQUEST_SIZE_CONFIG, Integer.toString(maxRequestBytes));
    config.put(ProducerConfig.BUFFER_MEMORY_CONFIG, Long.toString(bufferBytes(maxRequestBytes)));
    // Outages are waited out rather than turned into task failures: retry for as long as it takes.
    config.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, Integer.toString(Integer.MAX_VALUE));
    config.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, Long.toString(Long.MAX_VALUE));
    this.producerConfig = Map.copyOf(config);
    int largeRecordBytes = Math.max(LARGE_RECORD_BYTES, maxRequestBytes);
    config.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, "lz4");
    config.put(ProducerConfig.MAX_REQUEST_SIZE_CONFIG, Integer.toString(largeRecordBytes));
    config.put(ProducerConfig.BUFFER_MEMORY_CONFIG, Long.toString(bufferBytes(largeRecordBytes)));
    this.largeRecordConfig = Map.copyOf(config);
    this.maxRequestBytes = maxRequestBytes;
    this.alertsTopic = alertsTopic;
    this.dlqTopic = dlqTopic;
    this.instance = instance;
  }

  /**
   * The producer's {@code buffer.memory} for records of up to {@code maxRecordBytes}: a record takes its size
   * uncompressed of the buffer until its batch is sent, and one that does not fit the buffer is refused; at least
   * the client's default (32 MiB). It replaces any {@code kafka.buffer.memory} given in the Spark options.
   */
  private static long bufferBytes(int maxRecordBytes) {
    return Math.max(32L << 20, 2L * maxRecordBytes);
  }

  private static Producer<byte[], byte[]> producerFor(Map<String, String> config) {
    return PRODUCERS.computeIfAbsent(
        config,
        settings -> {
          Map<String, Object> props = new HashMap<>(settings);
          return new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer());
        });
  }

  /**
   * Drops {@code failed}, made for {@code config}, from the shared producers (the next task gets a new one) and
   * closes it.
   */
  private static void replace(Map<String, String> config, Producer<byte[], byte[]> failed) {
    if (PRODUCERS.remove(config, failed)) {
      LOG.warn("closing the evaluator's Kafka producer after a non-retriable error; the next task gets a new one");
      Thread closer = new Thread(() -> failed.close(Duration.ZERO), "fraudstream-producer-close");
      closer.setDaemon(true);
      closer.start();
    }
  }

  @Override
  public boolean open(long partitionId, long epochId) {
    producer = producerFor(producerConfig);
    largeRecordProducer = null;
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
    ProducerRecord<byte[], byte[]> record;
    if (out.kind() == OutputRow.Kind.ALERT) {
      record = new ProducerRecord<>(alertsTopic, null, null, out.key(), out.value());
    } else {
      RecordHeaders headers = new RecordHeaders();
      headers.add("error", out.error().getBytes(StandardCharsets.UTF_8));
      headers.add("error.detail", out.detail().getBytes(StandardCharsets.UTF_8));
      headers.add("source.topic", out.sourceTopic().getBytes(StandardCharsets.UTF_8));
      headers.add("source.partition", Integer.toString(out.sourcePartition()).getBytes(StandardCharsets.UTF_8));
      headers.add("source.offset", Long.toString(out.sourceOffset()).getBytes(StandardCharsets.UTF_8));
      record = new ProducerRecord<>(dlqTopic, null, null, out.key(), out.value(), headers);
    }
    Map<String, String> config = producerConfig;
    Producer<byte[], byte[]> sender = producer;
    if (uncompressedBytes(record) > maxRequestBytes) {
      if (largeRecordProducer == null) {
        largeRecordProducer = producerFor(largeRecordConfig);
      }
      config = largeRecordConfig;
      sender = largeRecordProducer;
    }
    try {
      sender.send(record, acknowledged(out.withoutPayload(), valueBytes(out), config, sender));
    } catch (RuntimeException exc) { // the producer itself failed (closed, fenced, fatal): replace it, fail the task
      replace(config, sender);
      throw new IllegalStateException("the evaluator's Kafka producer failed", exc);
    }
  }

  /** The size the producer checks against {@code max.request.size}, whatever its compression. */
  static int uncompressedBytes(ProducerRecord<byte[], byte[]> record) {
    return AbstractRecords.estimateSizeInBytesUpperBound(
        RecordBatch.CURRENT_MAGIC_VALUE,
        CompressionType.NONE,
        record.key(),
        record.value(),
        record.headers().toArray());
  }

  private static int valueBytes(OutputRow out) {
    return out.value() == null ? 0 : out.value().length;
  }

  /** What to do once {@code sender} has an answer for {@code out} (a row without its key and value). */
  private Callback acknowledged(
      OutputRow out, int valueBytes, Map<String, String> config, Producer<byte[], byte[]> sender) {
    return (metadata, error) -> {
      if (error == null) {
        if (out.kind() == OutputRow.Kind.ALERT) {
          metrics.alertAcknowledged(out.ruleId(), Math.max(0, System.currentTimeMillis() - out.transactionTsMs()));
        } else {
          metrics.dlq(out.error());
        }
      } else if (error instanceof RecordTooLargeException
          || error instanceof RecordBatchTooLargeException
          || error instanceof InvalidRecordException) {
        metrics.dlq("unwritable");
        LOG.error(
            "passed over an output Kafka refused: the {} for the transaction at {} ({} bytes) to {}: {}",
            out.kind() == OutputRow.Kind.ALERT ? "alert of rule " + out.ruleId() : "DLQ record (" + out.error() + ")",
            out.coordinates(),
            valueBytes,
            out.kind() == OutputRow.Kind.ALERT ? alertsTopic : dlqTopic,
            error.toString());
      } else {
        failure.compareAndSet(null, error);
        replace(config, sender);
      }
    };
  }

  @Override
  public void close(Throwable errorOrNull) {
    if (producer == null) {
      return;
    }
    try {
      producer.flush();
      if (largeRecordProducer != null) {
        largeRecordProducer.flush();
      }
    } catch (RuntimeException exc) { // replaced (closed) after an error, which failure already holds
      failure.compareAndSet(null, exc);
    }
    Exception failed = failure.get();
    if (errorOrNull == null && failed != null) {
      throw new IllegalStateException("Kafka did not acknowledge the evaluator's output", failed);
    }
  }
}
