package io.fraudstream.evaluator.core;

import java.math.BigInteger;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * One generation of a FraudRule as published on the rules topic (port of model.Rule). Rule JSON carries {@code
 * formatVersion} (absent means 1); a version newer than {@link #FORMAT_VERSION} is refused. A rule is written with the
 * lowest version that can carry it: 1, or 2 when it uses {@code windowPrecisionSeconds}.
 */
public record Rule(String ruleId, BigInteger generation, String uid, RuleSpec spec) {
  public static final int FORMAT_VERSION = 2;

  /** The Rule JSON ({@code formatVersion, ruleId, generation, uid, spec}) with the normalized spec. */
  public Map<String, Object> toJson() {
    Map<String, Object> json = new LinkedHashMap<>();
    json.put("formatVersion", spec.windowPrecisionSeconds() == null ? 1 : 2);
    json.put("ruleId", ruleId);
    json.put("generation", generation);
    json.put("uid", uid);
    json.put("spec", spec.toJson());
    return json;
  }

  /**
   * Read Rule JSON (a parsed value), re-validating the spec; InvalidRuleException for anything unusable,
   * RejectedRuleMessageException (unsupported-version) for a format version this reader does not know.
   */
  public static Rule fromJson(Object obj) throws InvalidRuleException, RejectedRuleMessageException {
    if (!(obj instanceof Map<?, ?> map)) {
      throw new InvalidRuleException("rule message must be a JSON object, got " + RuleSpec.describe(obj));
    }
    Object version = map.containsKey("formatVersion") ? map.get("formatVersion") : BigInteger.ONE;
    if (!(version instanceof BigInteger v) || v.signum() <= 0) {
      throw new InvalidRuleException(
          "rule message formatVersion must be a positive integer, got " + RuleSpec.describe(version));
    }
    if (v.compareTo(BigInteger.valueOf(FORMAT_VERSION)) > 0) {
      throw new RejectedRuleMessageException(
          RejectedRuleMessageException.Reason.UNSUPPORTED_VERSION,
          "rule message formatVersion " + v + " is newer than this reader's " + FORMAT_VERSION);
    }
    Object ruleId = map.get("ruleId");
    if (!(ruleId instanceof String id) || id.isEmpty()) {
      throw new InvalidRuleException(
          "rule message ruleId must be a non-empty string, got " + RuleSpec.describe(ruleId));
    }
    Object generation = map.get("generation");
    if (!(generation instanceof BigInteger number) || number.signum() < 0) {
      throw new InvalidRuleException(
          "rule message generation must be a non-negative integer, got " + RuleSpec.describe(generation));
    }
    Object uid = map.get("uid");
    if (!(uid instanceof String u) || u.isEmpty()) {
      throw new InvalidRuleException("rule message uid must be a non-empty string, got " + RuleSpec.describe(uid));
    }
    return new Rule(id, number, u, RuleSpec.parse(map.get("spec")));
  }

  /**
   * The Rule a rules-topic record value holds; null for a tombstone (null value). Throws RejectedRuleMessageException
   * whose reason says why the value is unusable: unparseable, invalid or unsupported-version.
   */
  public static Rule parseMessage(byte[] value) throws RejectedRuleMessageException {
    if (value == null) {
      return null;
    }
    if (value.length == 0) {
      throw new RejectedRuleMessageException(
          RejectedRuleMessageException.Reason.UNPARSEABLE,
          "rule message is empty (a deletion is a null value, not an empty one)");
    }
    Object obj;
    try {
      obj = Json.parse(value);
    } catch (JsonValueException exc) {
      throw new RejectedRuleMessageException(
          RejectedRuleMessageException.Reason.UNPARSEABLE, "rule message is not usable JSON: " + exc.getMessage());
    }
    try {
      return fromJson(obj);
    } catch (InvalidRuleException exc) {
      throw new RejectedRuleMessageException(RejectedRuleMessageException.Reason.INVALID, exc.getMessage());
    }
  }
}
