package io.fraudstream.evaluator.spark;

import java.io.Serializable;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
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

  RulesTopic {
    clientConfig = Map.copyOf(clientConfig);
  }

  /**
   * The end offset (the offset the next record will get) of every partition of the topic. Throws Kafka's
   * TimeoutException when the broker does not answer within a minute: the task fails and Spark retries it.
   */
  Map<Integer, Long> endOffsets() {
    Map<String, Object> props = new HashMap<>(clientConfig);
    props.put("client.id", "fraudstream-rules-end");
    try (KafkaConsumer<byte[], byte[]> consumer =
        new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
      List<PartitionInfo> infos = consumer.partitionsFor(topic, LOOKUP_TIMEOUT);
      List<TopicPartition> partitions =
          infos.stream().map(info -> new TopicPartition(topic, info.partition())).toList();
      Map<Integer, Long> ends = new HashMap<>();
      consumer.endOffsets(partitions, LOOKUP_TIMEOUT).forEach((tp, end) -> ends.put(tp.partition(), end));
      return ends;
    }
  }
}
