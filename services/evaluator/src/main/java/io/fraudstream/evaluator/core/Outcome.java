package io.fraudstream.evaluator.core;

import java.util.List;

/**
 * What one transaction did (Python's engine.Outcome). {@code rejection} is set for a transaction that was
 * not evaluated at all, and then everything else is empty; otherwise {@code alerts} are sorted by rule id, and {@code
 * late}, {@code skipped}, {@code applied} and {@code outOfOrder} concern only the groups the caller owns.
 */
public record Outcome(
    List<Alert> alerts,
    List<LateGroup> late,
    List<SkippedRule> skipped,
    List<String> applied,
    boolean outOfOrder,
    DeadLetters.Rejection rejection) {

  static Outcome rejected(DeadLetters.Rejection rejection) {
    return new Outcome(List.of(), List.of(), List.of(), List.of(), false, rejection);
  }

  /** A group a transaction was late for: its event time was below the group's newest minus its horizon. */
  public record LateGroup(String groupKey, long eventTimeMs, long newestMs, long horizonMs) {
    private static final int GROUP_PREVIEW_CHARS = 256;

    /** How far the event time lies below the group's horizon start {@code newestMs - horizonMs}. */
    public long behindMs() {
      return newestMs - horizonMs - eventTimeMs;
    }

    /** The DLQ error.detail of a late transaction: which group, by how much (bounded). */
    public String detail() {
      String key = groupKey;
      if (key.codePointCount(0, key.length()) > GROUP_PREVIEW_CHARS) {
        key = key.substring(0, key.offsetByCodePoints(0, GROUP_PREVIEW_CHARS)) + "\u2026";
      }
      return DeadLetters.bounded(
          "late for group "
              + key
              + " by "
              + behindMs()
              + " ms: eventTime "
              + eventTimeMs
              + " is before "
              + (newestMs - horizonMs)
              + " (newest eventTime "
              + newestMs
              + " minus horizon "
              + horizonMs
              + " ms)");
    }
  }

  /** An applicable rule that could not aggregate the transaction, and why. */
  public record SkippedRule(String ruleId, SkipReason reason) {}
}
