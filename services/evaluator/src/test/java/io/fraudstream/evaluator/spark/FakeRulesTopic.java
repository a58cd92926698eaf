package io.fraudstream.evaluator.spark;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.clients.consumer.MockConsumer;
import org.apache.kafka.clients.consumer.OffsetResetStrategy;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;

/**
 * A rules topic without a broker: a {@link RulesTopic} whose client configuration is this test's own, answered by
 * Kafka's MockConsumer with the given end offsets. {@link #close} forgets it.
 */
final class FakeRulesTopic implements AutoCloseable {
  private final Map<String, String> config = Map.of("bootstrap.servers", "fake-" + UUID.randomUUID() + ":9092");
  final RulesTopic topic;

  /** {@code endOffsets}: partition -> the offset the next record of the partition would get. */
  FakeRulesTopic(Map<Integer, Long> endOffsets, long catchUpTimeoutMs) {
    MockConsumer<byte[], byte[]> consumer = new MockConsumer<>(OffsetResetStrategy.EARLIEST);
    Map<TopicPartition, Long> ends = new HashMap<>();
    List<PartitionInfo> partitions =
        endOffsets.keySet().stream().sorted().map(p -> new PartitionInfo(Records.RULES, p, null, null, null)).toList();
    endOffsets.forEach((partition, end) -> ends.put(new TopicPartition(Records.RULES, partition), end));
    consumer.updatePartitions(Records.RULES, partitions);
    consumer.updateEndOffsets(ends);
    topic = new RulesTopic(config, Records.RULES, catchUpTimeoutMs); // first: a refused timeout registers nothing
    RulesTopic.CONSUMERS.put(config, consumer);
  }

  @Override
  public void close() {
    RulesTopic.CONSUMERS.remove(config).close();
  }
}
