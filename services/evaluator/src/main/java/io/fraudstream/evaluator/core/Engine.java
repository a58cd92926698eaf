package io.fraudstream.evaluator.core;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Predicate;

/**
 * The rule set and the evaluation of transactions against it: the twin of Python's {@code engine.Engine}, whose
 * module docstring is the specification (semantics 1-12). No I/O.
 *
 * <p>The shell feeds records in processing order to {@link #onRule} and {@link #onRecord}, keeps one {@link
 * GroupWindow} per group through a {@link GroupStore}, and persists {@link #toBytes()} (rules with their window
 * starts, rule sequence, key groups, lateness, future skew, sweep clock) next to the group state rather than rebuilding
 * the rule set from the compacted rules topic. Not thread-safe: one engine per evaluating thread.
 */
public final class Engine {
  public static final long DEFAULT_LATENESS_MS = 60_000;
  public static final long DEFAULT_FUTURE_SKEW_MS = 300_000;
  private static final int STATE_FORMAT = 2;

  /** A rule as held: the Rule plus when its message and its current window started. */
  private record RuleVersion(Rule rule, long publishedTsMs, long windowStartTsMs, long windowStartSeq) {
    List<String> keyGroup() {
      return rule.spec().groupingKeyNames();
    }
  }

  /**
   * How a rule reads the stored events of its key group, whose values follow the projection {@code fieldNames}: its
   * filters and its aggregate field by position there. A missing field passes no filter and holds no amount, as
   * {@link Filter#matches} and {@link Transaction#amountOf} read a transaction's fields.
   */
  private record Reading(List<Filter> filters, int[] filterPositions, int valuePosition) {
    static Reading of(RuleSpec spec, List<String> fieldNames) {
      List<Filter> filters = spec.filters();
      int[] positions = new int[filters.size()];
      for (int i = 0; i < positions.length; i++) {
        positions[i] = fieldNames.indexOf(filters.get(i).field());
      }
      String field = spec.aggregateFieldName();
      return new Reading(filters, positions, field == null ? -1 : fieldNames.indexOf(field));
    }

    /** Whether {@code event} passes every filter. */
    boolean passes(StoredEvent event) {
      for (int i = 0; i < filterPositions.length; i++) {
        int position = filterPositions[i];
        Object value = event.value(position);
        if (value == Missing.MISSING || !filters.get(i).matchesValue(value, event.number(position))) {
          return false;
        }
      }
      return true;
    }

    /** What {@code event} adds to the aggregate: one (COUNT), or the amount in its field, null if there is none. */
    BigDecimal value(StoredEvent event) {
      return valuePosition < 0 ? BigDecimal.ONE : event.amount(valuePosition);
    }
  }

  /** An ACTIVE rule of a key group and its {@link Reading} of the group's events. */
  private record ActiveRule(RuleVersion version, Reading reading) {}

  /**
   * Everything a transaction needs about one key group's rules, computed once per rule change: {@code specs} holds a
   * WindowSpec per ACTIVE rule and per PAUSE rule with a window precision (whose buckets keep filling while it is
   * paused, as a paused exact rule's events keep being stored); {@code widestActiveWindowMs} sets the horizon, {@code
   * widestExactWindowMs} how far back events are kept (bucketed rules need none), and {@code keepsEvents} whether they
   * are kept at all: not when every rule of the key group, in any state, is bucketed, since no window then reads a
   * stored event (a new rule or a new precision starts a new window).
   */
  private record KeyGroupPlan(
      List<String> fieldNames,
      List<ActiveRule> active,
      long widestActiveWindowMs,
      long widestExactWindowMs,
      boolean keepsEvents,
      Map<String, WindowSpec> specs) {}

  /**
   * A key group each transaction is grouped by (every one ever known, so that groups of one whose rules are gone are
   * deleted): its names, its group keys' {@link GroupKeys#keyPrefix prefix}, its plan (null without rules).
   */
  private record TouchedKeyGroup(List<String> names, String keyPrefix, KeyGroupPlan plan) {}

  private final long latenessMs;
  private final long futureSkewMs;
  private final TreeMap<String, RuleVersion> versions = new TreeMap<>(CodePointOrder::compareStrings);
  private long ruleSeq;
  private SweepClock clock = new SweepClock();
  private final TreeSet<List<String>> knownKeyGroups = new TreeSet<>(CodePointOrder::compareStringLists);
  private Map<List<String>, KeyGroupPlan> plans = Map.of();
  private List<RuleVersion> active = List.of();
  private List<TouchedKeyGroup> touchedKeyGroups = List.of();

  public Engine(long latenessMs, long futureSkewMs) {
    if (latenessMs < 0) {
      throw new IllegalArgumentException("lateness_ms must be >= 0, got " + latenessMs);
    }
    if (futureSkewMs < 0) {
      throw new IllegalArgumentException("future_skew_ms must be >= 0, got " + futureSkewMs);
    }
    this.latenessMs = latenessMs;
    this.futureSkewMs = futureSkewMs;
  }

  public long latenessMs() {
    return latenessMs;
  }

  public long futureSkewMs() {
    return futureSkewMs;
  }

  public int activeRuleCount() {
    return active.size();
  }

  /** The sweep clock ({@link SweepClock}): the median event time of the last transactions evaluated. */
  public Long clockMs() {
    return clock.nowMs();
  }

  /**
   * Whether a group of {@code keyGroup} idle since {@code maxEventTimeMs} is past its horizon (widest ACTIVE window +
   * lateness) on the sweep clock. A group whose key group has no rule, or that has no event ({@code maxEventTimeMs}
   * null), is always expired; before the clock has a time (no transaction evaluated yet), no other group is.
   */
  public boolean groupExpired(List<String> keyGroup, Long maxEventTimeMs) {
    if (!plans.containsKey(keyGroup)) {
      return true;
    }
    Long nowMs = clock.nowMs();
    if (maxEventTimeMs == null || nowMs == null) {
      return maxEventTimeMs == null;
    }
    return maxEventTimeMs < nowMs - horizonMs(keyGroup);
  }

  /** The key groups that have rules now. */
  public Set<List<String>> keyGroups() {
    return Collections.unmodifiableSet(plans.keySet());
  }

  /**
   * Every key group a rule of this engine has had since its state began (those without rules now too: their groups
   * are deleted when touched), in code point order.
   */
  public List<List<String>> knownKeyGroups() {
    return List.copyOf(knownKeyGroups);
  }

  /** H(g): the event-time span a group of {@code keyGroup} keeps, its widest ACTIVE window + lateness. */
  public long horizonMs(List<String> keyGroup) {
    KeyGroupPlan plan = plans.get(keyGroup);
    return latenessMs + (plan == null ? 0 : plan.widestActiveWindowMs());
  }

  /**
   * Apply one rules-topic record; {@code valueOrNull == null} is a tombstone. Throws RejectedRuleMessageException,
   * leaving the rule set unchanged, for a message that cannot be parsed or validated, of an unknown format version,
   * or whose ruleId is not the record key.
   */
  public void onRule(String ruleId, byte[] valueOrNull, long publishedTsMs) throws RejectedRuleMessageException {
    Rule rule = Rule.parseMessage(valueOrNull);
    if (rule != null && !rule.ruleId().equals(ruleId)) {
      throw new RejectedRuleMessageException(
          RejectedRuleMessageException.Reason.KEY_MISMATCH,
          "rule message key "
              + DeadLetters.preview(ruleId)
              + " does not match its ruleId "
              + DeadLetters.preview(rule.ruleId()));
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
      Set<String> names = new TreeSet<>(CodePointOrder::compareStrings);
      for (RuleVersion version : entry.getValue()) {
        names.addAll(version.rule().spec().fieldNamesUsed());
      }
      List<String> fieldNames = List.copyOf(names);
      List<ActiveRule> activeRules = new ArrayList<>();
      Map<String, WindowSpec> specs = new LinkedHashMap<>();
      long widestMs = 0;
      long widestExactMs = 0;
      boolean keepsEvents = false;
      for (RuleVersion version : entry.getValue()) {
        RuleSpec spec = version.rule().spec();
        keepsEvents = keepsEvents || spec.precisionMs() == null;
        boolean isActive = spec.state() == RuleState.ACTIVE;
        if (isActive || spec.precisionMs() != null) {
          specs.put(version.rule().ruleId(), windowSpec(version, fieldNames));
        }
        if (isActive) {
          activeRules.add(new ActiveRule(version, Reading.of(spec, fieldNames)));
          widestMs = Math.max(widestMs, spec.windowMs());
          widestExactMs = spec.precisionMs() == null ? Math.max(widestExactMs, spec.windowMs()) : widestExactMs;
        }
      }
      newPlans.put(
          entry.getKey(),
          new KeyGroupPlan(
              fieldNames,
              List.copyOf(activeRules),
              widestMs,
              widestExactMs,
              keepsEvents,
              Collections.unmodifiableMap(specs)));
    }
    plans = newPlans;
    List<RuleVersion> activeVersions = new ArrayList<>();
    for (RuleVersion version : versions.values()) {
      if (version.rule().spec().state() == RuleState.ACTIVE) {
        activeVersions.add(version);
      }
    }
    active = List.copyOf(activeVersions);
    List<TouchedKeyGroup> touched = new ArrayList<>();
    for (List<String> keyGroup : knownKeyGroups) {
      touched.add(new TouchedKeyGroup(keyGroup, GroupKeys.keyPrefix(keyGroup), newPlans.get(keyGroup)));
    }
    touchedKeyGroups = List.copyOf(touched);
  }

  private WindowSpec windowSpec(RuleVersion version, List<String> fieldNames) {
    RuleSpec spec = version.rule().spec();
    Long precisionMs = spec.precisionMs();
    // A bucketed rule's buckets do not depend on the projection: they outlive a change of it.
    WindowSpec.Key key =
        new WindowSpec.Key(
            version.rule().uid(),
            version.windowStartSeq(),
            version.windowStartTsMs(),
            precisionMs == null ? fieldNames : null,
            precisionMs);
    return new WindowSpec(
        key, WindowSpec.Kind.of(spec.aggregator()), spec.windowMs(), latenessMs, valueOf(version, fieldNames));
  }

  /** The value a stored event contributes to {@code version}'s window, or null if it does not count. */
  private static ValueOf valueOf(RuleVersion version, List<String> fieldNames) {
    Reading reading = Reading.of(version.rule().spec(), fieldNames);
    long startSeq = version.windowStartSeq();
    long startTsMs = version.windowStartTsMs();
    return event -> {
      if (event.ruleSeq() < startSeq || event.ingestTsMs() < startTsMs || !reading.passes(event)) {
        return null;
      }
      return reading.value(event);
    };
  }

  /**
   * Parse one transactions-topic record and evaluate it ({@link #onTransaction}); a record that does not parse is
   * rejected. Never throws for any record value.
   */
  public Outcome onRecord(
      byte[] value,
      long ingestTsMs,
      int partition,
      long offset,
      GroupStore store,
      long detectedAtMs,
      Predicate<String> owns) {
    Transaction tx;
    try {
      tx = Transaction.parse(value, ingestTsMs, partition, offset);
    } catch (InvalidTransactionException exc) {
      return Outcome.rejected(new DeadLetters.Rejection(exc.error(), exc.detail()));
    }
    return onTransaction(tx, store, detectedAtMs, owns);
  }

  /** Evaluate one transaction against the rules, updating the groups {@code owns} accepts. */
  public Outcome onTransaction(Transaction tx, GroupStore store, long detectedAtMs, Predicate<String> owns) {
    long aheadMs = tx.eventTimeMs() - tx.ingestTsMs();
    if (aheadMs > futureSkewMs) {
      return Outcome.rejected(
          DeadLetters.Rejection.of(
              DeadLetters.Error.FUTURE,
              "eventTime "
                  + tx.eventTimeMs()
                  + " is "
                  + aheadMs
                  + " ms ahead of its Kafka timestamp "
                  + tx.ingestTsMs()
                  + " (allowed future skew "
                  + futureSkewMs
                  + " ms)"));
    }
    clock.observe(tx.eventTimeMs());
    Map<String, Object> fields = tx.fields();
    List<Alert> alerts = new ArrayList<>();
    List<Outcome.LateGroup> late = new ArrayList<>();
    List<Outcome.SkippedRule> skipped = new ArrayList<>();
    List<String> applied = new ArrayList<>();
    boolean outOfOrder = false;
    for (TouchedKeyGroup touched : touchedKeyGroups) {
      List<String> keyGroup = touched.names();
      String key = GroupKeys.groupKey(touched.keyPrefix(), keyGroup, fields);
      if (key == null || !owns.test(key)) {
        continue;
      }
      KeyGroupPlan plan = touched.plan();
      if (plan == null) {
        store.delete(key);
        continue;
      }
      long horizonMs = plan.widestActiveWindowMs() + latenessMs;
      GroupWindow window = store.get(key);
      if (window == null) {
        window = new GroupWindow(plan.fieldNames());
      } else {
        Long newestMs = window.maxEventTimeMs();
        if (newestMs != null && tx.eventTimeMs() < newestMs - horizonMs) {
          late.add(new Outcome.LateGroup(key, tx.eventTimeMs(), newestMs, horizonMs));
          continue;
        }
        Long latestIngestMs = window.maxIngestTsMs();
        outOfOrder = outOfOrder || (latestIngestMs != null && tx.ingestTsMs() < latestIngestMs);
      }
      window.prepare(plan.fieldNames(), plan.specs());
      Object[] values = new Object[plan.fieldNames().size()];
      for (int i = 0; i < values.length; i++) {
        String name = plan.fieldNames().get(i);
        values[i] = fields.containsKey(name) ? fields.get(name) : Missing.MISSING;
      }
      StoredEvent event =
          window.insert(
              tx.eventTimeMs(),
              tx.ingestTsMs(),
              tx.partition(),
              tx.offset(),
              ruleSeq,
              values);
      // The event holds the transaction's fields as the key group's rules read them (its grouping fields are
      // there: the transaction has a group key).
      for (ActiveRule active : plan.active()) {
        if (!active.reading().passes(event)) {
          continue;
        }
        RuleVersion version = active.version();
        String ruleId = version.rule().ruleId();
        applied.add(ruleId);
        BigDecimal own = active.reading().value(event);
        if (own == null) {
          String name = version.rule().spec().aggregateFieldName();
          skipped.add(new Outcome.SkippedRule(ruleId, Transaction.skipReason(fields, name)));
          continue;
        }
        Alert alert = evaluate(version, window, tx, keyGroup, detectedAtMs, own);
        if (alert != null) {
          alerts.add(alert);
        }
      }
      long maxMs = window.maxEventTimeMs();
      window.setFloor(plan.keepsEvents() ? maxMs - plan.widestExactWindowMs() - latenessMs : maxMs + 1);
      store.put(key, window);
    }
    alerts.sort((a, b) -> CodePointOrder.compareStrings(a.ruleId(), b.ruleId()));
    return new Outcome(
        List.copyOf(alerts), List.copyOf(late), List.copyOf(skipped), List.copyOf(applied), outOfOrder, null);
  }

  /** The alert {@code version} raises for {@code tx}, whose own contribution is {@code own}, if its limit holds. */
  private Alert evaluate(
      RuleVersion version,
      GroupWindow window,
      Transaction tx,
      List<String> keyGroup,
      long detectedAtMs,
      BigDecimal own) {
    Rule rule = version.rule();
    RuleSpec spec = rule.spec();
    WindowAggregate aggregate = window.aggregate(rule.ruleId(), tx.eventTimeMs());
    if (tx.ingestTsMs() < version.windowStartTsMs()) {
      // e always counts for its own evaluation, even when ingested before the window start.
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
    state.put("futureSkewMs", futureSkewMs);
    state.put("ruleSeq", ruleSeq);
    state.put("clockSamplesMs", clock.samplesMs());
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

  /**
   * The engine {@link #toBytes()} described (also of the previous format); {@code latenessMs} and {@code
   * futureSkewMs}, when not null, replace the stored ones, since configuration may change across restarts.
   * CorruptStateException if the bytes are not such state.
   */
  public static Engine fromBytes(byte[] data, Long latenessMs, Long futureSkewMs) {
    try {
      Map<?, ?> state = (Map<?, ?>) Json.parse(data);
      Object format = state.get("format");
      if (!BigInteger.valueOf(STATE_FORMAT).equals(format) && !BigInteger.ONE.equals(format)) {
        throw new CorruptStateException("unknown detector state format " + format);
      }
      Object storedSkew = state.get("futureSkewMs");
      Engine engine =
          new Engine(
              latenessMs != null ? latenessMs : longOf(state.get("latenessMs")),
              futureSkewMs != null
                  ? futureSkewMs
                  : storedSkew == null ? DEFAULT_FUTURE_SKEW_MS : longOf(storedSkew));
      engine.ruleSeq = longOf(state.get("ruleSeq"));
      if (state.get("clockSamplesMs") instanceof List<?> samples) {
        for (Object sample : samples) {
          engine.clock.observe(longOf(sample));
        }
      } else if (state.get("clockMs") != null) { // format 1 kept the largest event time: one sample
        engine.clock.observe(longOf(state.get("clockMs")));
      }
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
    } catch (JsonValueException | InvalidRuleException | RejectedRuleMessageException | RuntimeException exc) {
      throw new CorruptStateException("unreadable detector state: " + exc.getMessage(), exc);
    }
  }

  public static Engine fromBytes(byte[] data) {
    return fromBytes(data, null, null);
  }

  private static long longOf(Object value) {
    return ((BigInteger) value).longValueExact();
  }
}
