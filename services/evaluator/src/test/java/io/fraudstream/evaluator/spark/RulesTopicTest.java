package io.fraudstream.evaluator.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Map;
import org.junit.jupiter.api.Test;

class RulesTopicTest {
  @Test
  void endOffsetsArePerPartitionOfTheTopic() {
    try (FakeRulesTopic rules = new FakeRulesTopic(Map.of(0, 12L, 1, 0L, 2, 3L), 1_000)) {
      assertEquals(Map.of(0, 12L, 1, 0L, 2, 3L), rules.topic.endOffsets());
      assertEquals(1_000, rules.topic.catchUpTimeoutMs());
    }
  }
}
