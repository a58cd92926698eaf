package io.fraudstream.evaluator.core;

import java.math.BigInteger;
import java.util.LinkedHashMap;
import java.util.Map;

/** One generation of a FraudRule as published on the rules topic (port of model.Rule). */
public record Rule(String ruleId, BigInteger generation, String uid, RuleSpec spec) {

  /** The Rule JSON ({@code ruleId, generation, uid, spec}) with the normalized spec. */
  public Map<String, Object> toJson() {
    Map<String, Object> json = new LinkedHashMap<>();
    json.put("ruleId", ruleId);
    json.put("generation", generation);
    json.put("uid", uid);
    json.put("spec", spec.toJson());
    return json;
  }

  /** Read Rule JSON (a parsed value), re-validating the spec. */
  public static Rule fromJson(Object obj) throws InvalidRuleException {
    if (!(obj instanceof Map<?, ?> map)) {
      throw new InvalidRuleException("rule message must be a JSON object, got " + RuleSpec.describe(obj));
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

  /** The Rule a rules-topic record value holds; null for a tombstone (null value). */
  public static Rule parseMessage(byte[] value) throws InvalidRuleException {
    if (value == null) {
      return null;
    }
    if (value.length == 0) {
      throw new InvalidRuleException("rule message is empty (a deletion is a null value, not an empty one)");
    }
    Object obj;
    try {
      obj = Json.parse(value);
    } catch (JsonValueException exc) {
      throw new InvalidRuleException("rule message is not valid JSON: " + exc.getMessage());
    }
    return fromJson(obj);
  }
}
