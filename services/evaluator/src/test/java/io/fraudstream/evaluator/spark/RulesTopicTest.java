package io.fraudstream.evaluator.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

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

  @Test
  void aCatchUpTimeoutThatWouldReleaseRecordsAtOnceIsRefused() {
    assertThrows(IllegalArgumentException.class, () -> new RulesTopic(Map.of(), Records.RULES, 0));
  }
}
