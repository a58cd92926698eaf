package io.fraudstream.evaluator.core;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Predicate;

/**
 * The rule set and the evaluation of transactions against it: a port of Python's {@code engine.Detector}, whose
 * module docstring is the specification (semantics 1-9). No I/O.
 *
 * <p>The shell feeds records in processing order (Kafka timestamp, then partition, then offset) to {@link #onRule}
 * and {@link #onTransaction}, keeps one {@link GroupWindow} per group through a {@link GroupStore}, and persists
 * {@link #toBytes()} (rules with their window starts, rule sequence, key groups, clock) next to the group state rather
 * than rebuilding the rule set from the compacted rules topic. Not thread-safe: one engine per evaluating thread.
 */
public final class Engine {
  public static final long DEFAULT_LATENESS_MS = 60_000;
  private static final int STATE_FORMAT = 1;

  /** A rule as held: the Rule plus when its message and its current window started. */
  private record RuleVersion(Rule rule, long publishedTsMs, long windowStartTsMs, long windowStartSeq) {
    List<String> keyGroup() {
      return rule.spec().groupingKeyNames();
    }

    boolean appliesTo(Map<String, Object> fields) {
      RuleSpec spec = rule.spec();
      if (spec.state() != RuleState.ACTIVE) {
        return false;
      }
      for (String name : spec.groupingKeyNames()) {
        if (!fields.containsKey(name)) {
          return false;
        }
      }
      for (Filter filter : spec.filters()) {
        if (!filter.matches(fields)) {
          return false;
        }
      }
      return true;
    }
  }

  /** Everything a transaction needs about one key group's rules, computed once per rule change. */
  private record KeyGroupPlan(
      List<String> fieldNames, List<RuleVersion> active, long widestActiveWindowMs, Map<String, WindowSpec> specs) {}

  private final long latenessMs;
  private final TreeMap<String, RuleVersion> versions = new TreeMap<>(PyRepr::compareStrings);
  private long ruleSeq;
  private Long clockMs;
  private final TreeSet<List<String>> knownKeyGroups = new TreeSet<>(PyRepr::compareStringLists);
  private Map<List<String>, KeyGroupPlan> plans = Map.of();
  private List<RuleVersion> active = List.of();
  private List<List<String>> touchedKeyGroups = List.of();

  public Engine(long latenessMs) {
    if (latenessMs < 0) {
      throw new IllegalArgumentException("lateness_ms must be >= 0, got " + latenessMs);
    }
    this.latenessMs = latenessMs;
  }

  public long latenessMs() {
    return latenessMs;
  }

  public int activeRuleCount() {
    return active.size();
  }

  /** The largest event time of the transactions evaluated so far; null before the first. */
  public Long clockMs() {
    return clockMs;
  }

  /**
   * Whether a group idle since {@code maxEventTimeMs} is past its retention (widest ACTIVE window + lateness) on the
   * engine's clock; a group whose key group has no rule is always expired.
   */
  public boolean groupExpired(String groupKey, Long maxEventTimeMs) {
    KeyGroupPlan plan = plans.get(GroupKeys.keyGroupOf(groupKey));
    if (plan == null) {
      return true;
    }
    if (maxEventTimeMs == null || clockMs == null) {
      return maxEventTimeMs == null;
    }
    return maxEventTimeMs < clockMs - (plan.widestActiveWindowMs() + latenessMs);
  }

  /**
   * Apply one rules-topic record; {@code valueOrNull == null} is a tombstone. Throws InvalidRuleException for a
   * message that cannot be parsed or validated, or whose ruleId is not the record key (the rule set is then
   * unchanged).
   */
  public void onRule(String ruleId, byte[] valueOrNull, long publishedTsMs) throws InvalidRuleException {
    Rule rule = Rule.parseMessage(valueOrNull);
    if (rule != null && !rule.ruleId().equals(ruleId)) {
      throw new InvalidRuleException(
          "rule message key "
              + PyRepr.repr(ruleId)
              + " does not match its ruleId "
              + PyRepr.repr(rule.ruleId()));
    }
    ruleSeq++;
    if (rule == null) {
      versions.remove(ruleId);
    } else {
      RuleVersion previous = versions.get(ruleId);
      boolean keepsWindow =
          previous != null
              && previous.rule().uid().equals(rule.uid())
              && previous.rule().spec().sameWindowIdentity(rule.spec());
      long startTsMs = keepsWindow ? previous.windowStartTsMs() : publishedTsMs;
      long startSeq = keepsWindow ? previous.windowStartSeq() : ruleSeq;
      versions.put(ruleId, new RuleVersion(rule, publishedTsMs, startTsMs, startSeq));
      knownKeyGroups.add(rule.spec().groupingKeyNames());
    }
    replan();
  }

  private void replan() {
    Map<List<String>, List<RuleVersion>> byKeyGroup = new LinkedHashMap<>();
    for (RuleVersion version : versions.values()) {
      byKeyGroup.computeIfAbsent(version.keyGroup(), k -> new ArrayList<>()).add(version);
    }
    Map<List<String>, KeyGroupPlan> newPlans = new HashMap<>();
    for (Map.Entry<List<String>, List<RuleVersion>> entry : byKeyGroup.entrySet()) {
      Set<String> names = new TreeSet<>(PyRepr::compareStrings);
      for (RuleVersion version : entry.getValue()) {
        names.addAll(version.rule().spec().fieldNamesUsed());
      }
      List<String> fieldNames = List.copyOf(names);
      List<RuleVersion> activeVersions = new ArrayList<>();
      Map<String, WindowSpec> specs = new LinkedHashMap<>();
      long widestMs = 0;
      for (RuleVersion version : entry.getValue()) {
        RuleSpec spec = version.rule().spec();
        if (spec.state() != RuleState.ACTIVE) {
          continue;
        }
        activeVersions.add(version);
        WindowSpec.Key key =
            new WindowSpec.Key(
                version.rule().uid(), version.windowStartSeq(), version.windowStartTsMs(), fieldNames);
        specs.put(
            version.rule().ruleId(),
            new WindowSpec(
                key, WindowSpec.Kind.of(spec.aggregator()), spec.windowMs(), latenessMs, valueOf(version, fieldNames)));
        widestMs = Math.max(widestMs, spec.windowMs());
      }
      newPlans.put(
          entry.getKey(),
          new KeyGroupPlan(
              fieldNames, List.copyOf(activeVersions), widestMs, Collections.unmodifiableMap(specs)));
    }
    plans = newPlans;
    List<RuleVersion> activeVersions = new ArrayList<>();
    for (RuleVersion version : versions.values()) {
      if (version.rule().spec().state() == RuleState.ACTIVE) {
        activeVersions.add(version);
      }
    }
    active = List.copyOf(activeVersions);
    touchedKeyGroups = List.copyOf(knownKeyGroups);
  }

  /** The value a stored event contributes to {@code version}'s window, or null if it does not count. */
  private static ValueOf valueOf(RuleVersion version, List<String> fieldNames) {
    RuleSpec spec = version.rule().spec();
    List<Filter> filters = spec.filters();
    int[] filterPositions = new int[filters.size()];
    for (int i = 0; i < filterPositions.length; i++) {
      filterPositions[i] = fieldNames.indexOf(filters.get(i).field());
    }
    int valuePosition = spec.aggregateFieldName() == null ? -1 : fieldNames.indexOf(spec.aggregateFieldName());
    long startSeq = version.windowStartSeq();
    long startTsMs = version.windowStartTsMs();
    return event -> {
      if (event.ruleSeq() < startSeq || event.ingestTsMs() < startTsMs) {
        return null;
      }
      List<Object> values = event.values();
      List<BigDecimal> numbers = event.numbers();
      for (int i = 0; i < filterPositions.length; i++) {
        int position = filterPositions[i];
        Object value = values.get(position);
        if (value == Missing.MISSING || !filters.get(i).matchesValue(value, numbers.get(position))) {
          return null;
        }
      }
      if (valuePosition < 0) {
        return BigDecimal.ONE;
      }
      return event.amounts().get(valuePosition);
    };
  }

  /** Evaluate one transaction against the rules, updating the groups {@code owns} accepts. */
  public Outcome onTransaction(Transaction tx, GroupStore store, long detectedAtMs, Predicate<String> owns) {
    Map<String, Object> fields = tx.fields();
    Set<String> applicableIds = new HashSet<>();
    for (RuleVersion version : active) {
      if (!version.appliesTo(fields)) {
        continue;
      }
      String name = version.rule().spec().aggregateFieldName();
      if (name != null) {
        try {
          Transaction.numericValue(fields, name);
        } catch (InvalidTransactionException exc) {
          return new Outcome(List.of(), List.of(), exc.getReason());
        }
      }
      applicableIds.add(version.rule().ruleId());
    }
    if (clockMs == null || tx.eventTimeMs() > clockMs) {
      clockMs = tx.eventTimeMs();
    }
    List<Alert> alerts = new ArrayList<>();
    List<String> lateGroups = new ArrayList<>();
    for (List<String> keyGroup : touchedKeyGroups) {
      String key = GroupKeys.groupKey(keyGroup, fields);
      if (key == null || !owns.test(key)) {
        continue;
      }
      KeyGroupPlan plan = plans.get(keyGroup);
      if (plan == null) {
        store.delete(key);
        continue;
      }
      GroupWindow window = store.get(key);
      if (window == null) {
        window = new GroupWindow(plan.fieldNames());
      } else if (window.isLate(tx.eventTimeMs(), latenessMs)) {
        lateGroups.add(key);
        continue;
      }
      window.prepare(plan.fieldNames(), plan.specs());
      Object[] values = new Object[plan.fieldNames().size()];
      for (int i = 0; i < values.length; i++) {
        String name = plan.fieldNames().get(i);
        values[i] = fields.containsKey(name) ? fields.get(name) : Missing.MISSING;
      }
      window.insert(
          tx.eventTimeMs(),
          tx.ingestTsMs(),
          tx.partition(),
          tx.offset(),
          ruleSeq,
          Collections.unmodifiableList(java.util.Arrays.asList(values)));
      for (RuleVersion version : plan.active()) {
        if (applicableIds.contains(version.rule().ruleId())) {
          Alert alert = evaluate(version, window, tx, keyGroup, detectedAtMs);
          if (alert != null) {
            alerts.add(alert);
          }
        }
      }
      window.raiseFloor(window.maxEventTimeMs() - plan.widestActiveWindowMs() - latenessMs);
      store.put(key, window);
    }
    alerts.sort((a, b) -> PyRepr.compareStrings(a.ruleId(), b.ruleId()));
    return new Outcome(List.copyOf(alerts), List.copyOf(lateGroups), null);
  }

  private Alert evaluate(
      RuleVersion version, GroupWindow window, Transaction tx, List<String> keyGroup, long detectedAtMs) {
    Rule rule = version.rule();
    RuleSpec spec = rule.spec();
    WindowAggregate aggregate = window.aggregate(rule.ruleId(), tx.eventTimeMs());
    if (tx.ingestTsMs() < version.windowStartTsMs()) {
      // e always counts for its own evaluation, even when ingested before the window start.
      BigDecimal own;
      if (spec.aggregateFieldName() == null) {
        own = BigDecimal.ONE;
      } else {
        try {
          own = Transaction.numericValue(tx.fields(), spec.aggregateFieldName());
        } catch (InvalidTransactionException exc) {
          throw new IllegalStateException("validated before evaluation", exc);
        }
      }
      aggregate = aggregate.include(own, spec.aggregator());
    }
    if (!aggregate.limitHolds(spec.aggregator(), spec.limitOperator(), spec.limit())) {
      return null;
    }
    Map<String, Object> groupingKey = new LinkedHashMap<>();
    for (String name : keyGroup) {
      groupingKey.put(name, tx.fields().get(name));
    }
    return new Alert(rule, groupingKey, aggregate.value(spec.aggregator()), tx, detectedAtMs);
  }

  /** The rule-set state as JSON (the same shape as Python's Detector.to_bytes). */
  public byte[] toBytes() {
    Map<String, Object> state = new LinkedHashMap<>();
    state.put("format", STATE_FORMAT);
    state.put("latenessMs", latenessMs);
    state.put("ruleSeq", ruleSeq);
    state.put("clockMs", clockMs);
    state.put("keyGroups", new ArrayList<>(knownKeyGroups));
    List<Object> rules = new ArrayList<>();
    for (Map.Entry<String, RuleVersion> entry : versions.entrySet()) {
      RuleVersion version = entry.getValue();
      Map<String, Object> item = new LinkedHashMap<>();
      item.put("ruleId", entry.getKey());
      item.put("rule", version.rule().toJson());
      item.put("publishedTsMs", version.publishedTsMs());
      item.put("windowStartTsMs", version.windowStartTsMs());
      item.put("windowStartSeq", version.windowStartSeq());
      rules.add(item);
    }
    state.put("rules", rules);
    return Json.writeSorted(state).getBytes(StandardCharsets.UTF_8);
  }

  /** The engine {@link #toBytes()} described; CorruptStateException if the bytes are not such state. */
  public static Engine fromBytes(byte[] data) {
    try {
      Map<?, ?> state = (Map<?, ?>) Json.parse(data);
      Object format = state.get("format");
      if (!BigInteger.valueOf(STATE_FORMAT).equals(format)) {
        throw new CorruptStateException("unknown detector state format " + PyRepr.repr(format));
      }
      Engine engine = new Engine(longOf(state.get("latenessMs")));
      engine.ruleSeq = longOf(state.get("ruleSeq"));
      engine.clockMs = state.get("clockMs") == null ? null : longOf(state.get("clockMs"));
      for (Object group : (List<?>) state.get("keyGroups")) {
        List<String> names = new ArrayList<>();
        for (Object name : (List<?>) group) {
          names.add((String) name);
        }
        engine.knownKeyGroups.add(List.copyOf(names));
      }
      for (Object raw : (List<?>) state.get("rules")) {
        Map<?, ?> entry = (Map<?, ?>) raw;
        engine.versions.put(
            (String) entry.get("ruleId"),
            new RuleVersion(
                Rule.fromJson(entry.get("rule")),
                longOf(entry.get("publishedTsMs")),
                longOf(entry.get("windowStartTsMs")),
                longOf(entry.get("windowStartSeq"))));
      }
      engine.replan();
      return engine;
    } catch (CorruptStateException exc) {
      throw exc;
    } catch (JsonValueException | InvalidRuleException | RuntimeException exc) {
      throw new CorruptStateException("unreadable detector state: " + exc.getMessage(), exc);
    }
  }

  private static long longOf(Object value) {
    return ((BigInteger) value).longValueExact();
  }
}
