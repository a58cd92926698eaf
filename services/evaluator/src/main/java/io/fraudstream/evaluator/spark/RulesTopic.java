package io.fraudstream.evaluator.spark;

import java.io.Serializable;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * The rules topic as the start-up barrier sees it: where its partitions end now.
 *
 * <p>{@code catchUpTimeoutMs} bounds how long a bucket holds records waiting to read up to that end (see {@link
 * RulesCatchUp}).
 */
record RulesTopic(Map<String, String> clientConfig, String topic, long catchUpTimeoutMs) implements Serializable {
  private static final Duration LOOKUP_TIMEOUT = Duration.ofSeconds(60);
  /**
   * One consumer per JVM and client configuration, kept: a lookup is on the path of every task's first record. (Tests
   * put a Kafka MockConsumer here for their configuration.)
   */
  static final Map<Map<String, String>, Consumer<byte[], byte[]>> CONSUMERS = new ConcurrentHashMap<>();

  RulesTopic {
    if (catchUpTimeoutMs <= 0) {
      // At 0 a bucket would release its records before reading the rules: evaluation with part of the rule set.
      throw new IllegalArgumentException("catchUpTimeoutMs must be > 0, got " + catchUpTimeoutMs);
    }
    clientConfig = Map.copyOf(clientConfig);
  }

  /**
   * The end offset (the offset the next record will get) of every partition of the topic. Throws Kafka's
   * TimeoutException when the broker does not answer within a minute: the task fails and Spark retries it.
   */
  Map<Integer, Long> endOffsets() {
    Consumer<byte[], byte[]> consumer = CONSUMERS.computeIfAbsent(clientConfig, RulesTopic::consumer);
    // A KafkaConsumer is not thread-safe; the buckets' tasks of one JVM take turns.
    synchronized (consumer) {
      List<TopicPartition> partitions =
          consumer.partitionsFor(topic, LOOKUP_TIMEOUT).stream()
              .map(info -> new TopicPartition(topic, info.partition()))
              .toList();
      Map<Integer, Long> ends = new HashMap<>();
      consumer.endOffsets(partitions, LOOKUP_TIMEOUT).forEach((tp, end) -> ends.put(tp.partition(), end));
      return ends;
    }
  }

  private static KafkaConsumer<byte[], byte[]> consumer(Map<String, String> config) {
    Map<String, Object> props = new HashMap<>(config);
    props.put("client.id", "fraudstream-rules-end");
    return new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer());
  }
}
