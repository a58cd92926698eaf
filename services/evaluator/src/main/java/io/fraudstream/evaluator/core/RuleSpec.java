package io.fraudstream.evaluator.core;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * A validated, normalized FraudRule spec (port of model.RuleSpec; build it with {@link #parse}).
 *
 * <p>Normalization: grouping key names sorted (by code point); aggregate field null for COUNT; filter values that are
 * integers or decimal strings become BigDecimals; the limit is exact; {@code windowPrecisionSeconds} null for exact
 * per-event windows, else a divisor of {@code windowMinutes * 60}. {@link #parse} refuses anything else with an
 * {@link InvalidRuleException} whose message is Python's text.
 */
public record RuleSpec(
    RuleState state,
    List<String> groupingKeyNames,
    AggregatorFunction aggregator,
    String aggregateFieldName,
    LimitOperator limitOperator,
    BigDecimal limit,
    int windowMinutes,
    List<Filter> filters,
    Integer windowPrecisionSeconds) {

  public static final int MAX_WINDOW_MINUTES = 527_040;
  public static final long MS_PER_MINUTE = 60_000;
  private static final Set<String> SPEC_FIELDS =
      Set.of(
          "state",
          "groupingKeyNames",
          "aggregatorFunctionType",
          "aggregateFieldName",
          "limitOperatorType",
          "limit",
          "windowMinutes",
          "filters",
          "windowPrecisionSeconds");
  private static final Set<String> FILTER_FIELDS = Set.of("field", "operator", "value");

  public long windowMs() {
    return windowMinutes * MS_PER_MINUTE;
  }

  /** The width of the rule's buckets in ms; null for exact per-event windows. */
  public Long precisionMs() {
    return windowPrecisionSeconds == null ? null : windowPrecisionSeconds * 1000L;
  }

  /** Fields the rule reads besides its grouping keys: aggregate field and filter fields. */
  public Set<String> fieldNamesUsed() {
    Set<String> names = new TreeSet<>(CodePointOrder::compareStrings);
    for (Filter filter : filters) {
      names.add(filter.field());
    }
    if (aggregateFieldName != null) {
      names.add(aggregateFieldName);
    }
    return names;
  }

  /** Whether the window identity (grouping keys, aggregate field, filters, window precision) equals {@code other}'s. */
  public boolean sameWindowIdentity(RuleSpec other) {
    if (!groupingKeyNames.equals(other.groupingKeyNames)
        || !java.util.Objects.equals(aggregateFieldName, other.aggregateFieldName)
        || !java.util.Objects.equals(windowPrecisionSeconds, other.windowPrecisionSeconds)
        || filters.size() != other.filters.size()) {
      return false;
    }
    for (int i = 0; i < filters.size(); i++) {
      if (!filters.get(i).sameAs(other.filters.get(i))) {
        return false;
      }
    }
    return true;
  }

  /** The normalized spec with the contract's camelCase names. */
  public Map<String, Object> toJson() {
    Map<String, Object> spec = new LinkedHashMap<>();
    spec.put("state", state.name());
    spec.put("groupingKeyNames", groupingKeyNames);
    spec.put("aggregatorFunctionType", aggregator.name());
    if (aggregateFieldName != null) {
      spec.put("aggregateFieldName", aggregateFieldName);
    }
    spec.put("limitOperatorType", limitOperator.name());
    spec.put("limit", Decimals.canonical(limit));
    spec.put("windowMinutes", BigInteger.valueOf(windowMinutes));
    List<Object> rendered = new ArrayList<>();
    for (Filter filter : filters) {
      rendered.add(filter.toJson());
    }
    spec.put("filters", rendered);
    if (windowPrecisionSeconds != null) {
      spec.put("windowPrecisionSeconds", BigInteger.valueOf(windowPrecisionSeconds));
    }
    return spec;
  }

  // ---- parsing (model.parse_spec) ----

  /**
   * A spec value as analysts see it in a refusal: compact JSON cut to {@link DeadLetters#PREVIEW_CHARS}, after its
   * JSON type unless a scalar's JSON says it (model._describe).
   */
  static String describe(Object value) {
    if (value == null || value instanceof Boolean || value instanceof BigInteger || value instanceof String) {
      return DeadLetters.preview(value);
    }
    String kind = value instanceof Map ? "object" : value instanceof List ? "array" : "number";
    return kind + " " + DeadLetters.preview(value);
  }

  private static Object require(Map<?, ?> raw, String name) throws InvalidRuleException {
    Object value = raw.get(name);
    if (value == null) {
      throw new InvalidRuleException("spec." + name + " is required");
    }
    return value;
  }

  private static <E extends Enum<E>> E enumMember(Class<E> type, Object value, String where)
      throws InvalidRuleException {
    if (value instanceof String s) {
      for (E member : type.getEnumConstants()) {
        if (member.name().equals(s)) {
          return member;
        }
      }
    }
    List<String> allowed = new ArrayList<>();
    for (E member : type.getEnumConstants()) {
      allowed.add(member.name());
    }
    throw new InvalidRuleException(
        where + " must be one of " + String.join(", ", allowed) + ", got " + describe(value));
  }

  private static String fieldName(Object value, String where) throws InvalidRuleException {
    if (!(value instanceof String s) || s.isEmpty()) {
      throw new InvalidRuleException(where + " must be a non-empty string, got " + describe(value));
    }
    return s;
  }

  private static List<String> parseGrouping(Object value) throws InvalidRuleException {
    if (!(value instanceof List<?> list) || list.isEmpty()) {
      throw new InvalidRuleException(
          "spec.groupingKeyNames must be a non-empty list of field names, got " + describe(value));
    }
    List<String> names = new ArrayList<>();
    for (int i = 0; i < list.size(); i++) {
      names.add(fieldName(list.get(i), "spec.groupingKeyNames[" + i + "]"));
    }
    for (String name : names) {
      if (names.indexOf(name) != names.lastIndexOf(name)) {
        throw new InvalidRuleException("spec.groupingKeyNames names " + DeadLetters.preview(name) + " more than once");
      }
    }
    names.sort(CodePointOrder::compareStrings);
    return Collections.unmodifiableList(names);
  }

  private static BigDecimal parseLimit(Object value) throws InvalidRuleException {
    String where = "spec.limit";
    BigDecimal number = value instanceof Boolean ? null : Decimals.asNumber(value);
    if (number == null) {
      throw new InvalidRuleException(where + " must be an integer or a decimal string, got " + describe(value));
    }
    if (!Decimals.isAmount(number)) {
      throw new InvalidRuleException(
          where + " is out of range (at most 100 digits each side of the point): " + DeadLetters.preview(value));
    }
    return number;
  }

  private static int parseWindowMinutes(Object value) throws InvalidRuleException {
    String where = "spec.windowMinutes";
    if (!(value instanceof BigInteger minutes)) {
      throw new InvalidRuleException(where + " must be an integer, got " + describe(value));
    }
    if (minutes.signum() < 1) {
      throw new InvalidRuleException(where + " must be at least 1, got " + minutes);
    }
    if (minutes.compareTo(BigInteger.valueOf(MAX_WINDOW_MINUTES)) > 0) {
      throw new InvalidRuleException(
          where + " must be at most " + MAX_WINDOW_MINUTES + " (366 days), got " + minutes);
    }
    return minutes.intValue();
  }

  private static Integer parsePrecision(Object value, int windowMinutes) throws InvalidRuleException {
    String where = "spec.windowPrecisionSeconds";
    if (value == null) {
      return null;
    }
    if (!(value instanceof BigInteger seconds)) {
      throw new InvalidRuleException(where + " must be an integer, got " + describe(value));
    }
    if (seconds.signum() < 1) {
      throw new InvalidRuleException(where + " must be at least 1, got " + seconds);
    }
    BigInteger windowSeconds = BigInteger.valueOf(windowMinutes * 60L);
    if (windowSeconds.mod(seconds).signum() != 0) {
      throw new InvalidRuleException(
          where + " must divide windowMinutes * 60 = " + windowSeconds + ", got " + seconds);
    }
    return seconds.intValueExact();
  }

  private static Object parseFilterScalar(Object value, String where) throws InvalidRuleException {
    if (value == null || value instanceof Boolean) {
      return value;
    }
    if (value instanceof BigInteger i) {
      return filterNumber(new BigDecimal(i), value, where);
    }
    if (value instanceof BigDecimal d) {
      return filterNumber(d, value, where);
    }
    if (value instanceof String s) {
      BigDecimal number = Decimals.parseDecimalText(s);
      return number == null ? s : filterNumber(number, value, where);
    }
    throw new InvalidRuleException(
        where + " must be a string, integer, boolean or null, got " + describe(value));
  }

  /**
   * {@code number}, if its normalized text ({@link Decimals#canonical}, as the rule message and the state hold it)
   * is a number both cores read back: a decimal literal of at most {@link Json#MAX_NUMBER_CHARS} characters, its
   * exponent within +-{@link Json#MAX_EXPONENT}.
   */
  private static BigDecimal filterNumber(BigDecimal number, Object value, String where)
      throws InvalidRuleException {
    if (number.signum() != 0
        && (Math.abs(Decimals.adjusted(number)) > Json.MAX_EXPONENT
            || Decimals.canonical(number).length() > Json.MAX_NUMBER_CHARS)) {
      throw new InvalidRuleException(
          where
              + " is out of range (written out, at most "
              + Json.MAX_NUMBER_CHARS
              + " characters with an exponent within +-"
              + Json.MAX_EXPONENT
              + "): "
              + DeadLetters.preview(value));
    }
    return number;
  }

  private static Filter parseFilter(Object raw, int index) throws InvalidRuleException {
    String where = "spec.filters[" + index + "]";
    if (!(raw instanceof Map<?, ?> map)) {
      throw new InvalidRuleException(
          where + " must be an object with field, operator and value, got " + describe(raw));
    }
    for (Object key : map.keySet()) {
      if (!FILTER_FIELDS.contains(key)) {
        throw new InvalidRuleException(
            where + "." + key + " is not a filter field (expected field, operator, value)");
      }
    }
    String name = fieldName(map.get("field"), where + ".field");
    FilterOperator op = enumMember(FilterOperator.class, map.get("operator"), where + ".operator");
    if (!map.containsKey("value")) {
      throw new InvalidRuleException(where + ".value is required");
    }
    Object rawValue = map.get("value");
    Object value;
    if (op.takesList()) {
      if (!(rawValue instanceof List<?> list) || list.isEmpty()) {
        throw new InvalidRuleException(
            where + ".value must be a non-empty list for operator " + op + ", got " + describe(rawValue));
      }
      List<Object> scalars = new ArrayList<>();
      for (int i = 0; i < list.size(); i++) {
        scalars.add(parseFilterScalar(list.get(i), where + ".value[" + i + "]"));
      }
      value = Collections.unmodifiableList(scalars);
    } else {
      if (rawValue instanceof List || rawValue instanceof Map) {
        throw new InvalidRuleException(
            where + ".value must be a single value for operator " + op + ", got " + describe(rawValue));
      }
      value = parseFilterScalar(rawValue, where + ".value");
      if (op.isOrdering() && !(value instanceof BigDecimal)) {
        throw new InvalidRuleException(
            where + ".value must be a number for operator " + op + ", got " + describe(rawValue));
      }
    }
    return new Filter(name, op, value);
  }

  private static List<Filter> parseFilters(Object value) throws InvalidRuleException {
    if (value == null) {
      return List.of();
    }
    if (!(value instanceof List<?> list)) {
      throw new InvalidRuleException("spec.filters must be a list, got " + describe(value));
    }
    List<Filter> filters = new ArrayList<>();
    for (int i = 0; i < list.size(); i++) {
      filters.add(parseFilter(list.get(i), i));
    }
    return Collections.unmodifiableList(filters);
  }

  /** Validate and normalize a raw spec (a parsed JSON value); the exception names the offending field. */
  public static RuleSpec parse(Object raw) throws InvalidRuleException {
    if (!(raw instanceof Map<?, ?> map)) {
      throw new InvalidRuleException("spec must be an object, got " + describe(raw));
    }
    for (Object key : map.keySet()) {
      if (!SPEC_FIELDS.contains(key)) {
        throw new InvalidRuleException("spec." + key + " is not a FraudRule spec field");
      }
    }
    Object stateRaw = map.get("state");
    RuleState state = stateRaw == null ? RuleState.ACTIVE : enumMember(RuleState.class, stateRaw, "spec.state");
    List<String> grouping = parseGrouping(require(map, "groupingKeyNames"));
    AggregatorFunction aggregator =
        enumMember(
            AggregatorFunction.class, require(map, "aggregatorFunctionType"), "spec.aggregatorFunctionType");
    String aggregateFieldName = null;
    if (aggregator != AggregatorFunction.COUNT) {
      Object name = map.get("aggregateFieldName");
      if (name == null) {
        throw new InvalidRuleException(
            "spec.aggregateFieldName is required unless aggregatorFunctionType is COUNT");
      }
      aggregateFieldName = fieldName(name, "spec.aggregateFieldName");
    }
    LimitOperator limitOperator =
        enumMember(LimitOperator.class, require(map, "limitOperatorType"), "spec.limitOperatorType");
    BigDecimal limit = parseLimit(require(map, "limit"));
    int windowMinutes = parseWindowMinutes(require(map, "windowMinutes"));
    List<Filter> filters = parseFilters(map.get("filters"));
    Integer precision = parsePrecision(map.get("windowPrecisionSeconds"), windowMinutes);
    return new RuleSpec(
        state, grouping, aggregator, aggregateFieldName, limitOperator, limit, windowMinutes, filters, precision);
  }
}
