package io.fraudstream.evaluator.core;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code field operator value} (port of model.Filter). {@code value} is a scalar (String, BigDecimal, Boolean or
 * null) or, for IN/NOT_IN, an unmodifiable List of scalars. {@code number} is what a scalar value reads as ({@link
 * Decimals#asNumber}, null where it is no number, and for lists); {@code candidates} indexes a list value (null for
 * scalars). Both are derived once by the three-argument constructor.
 *
 * <p>A missing field never matches (not even NOT_EQUAL / NOT_IN). Two values are equal when both read as numbers
 * ({@link Decimals#asNumber}, numeric strings on either side count) and are numerically equal, or both are strings
 * and equal, or both are the same boolean, or both are null. Ordering operators hold only between two numbers.
 */
public record Filter(
    String field, FilterOperator operator, Object value, BigDecimal number, CandidateSet candidates) {

  /** A filter whose {@code number} and {@code candidates} are derived from {@code value}. */
  public Filter(String field, FilterOperator operator, Object value) {
    this(field, operator, value, Decimals.asNumber(value), candidatesOf(value));
  }

  private static CandidateSet candidatesOf(Object value) {
    return value instanceof List<?> items ? new CandidateSet(items) : null;
  }

  /** Whether a transaction's fields satisfy the filter; a missing field never does. */
  public boolean matches(Map<String, Object> fields) {
    return fields.containsKey(field) && matchesValue(fields.get(field));
  }

  /** Whether a present field value satisfies the filter. */
  public boolean matchesValue(Object actual) {
    return matchesValue(actual, Decimals.asNumber(actual));
  }

  /** {@link #matchesValue(Object)} for a value whose reading as a number is already known. */
  public boolean matchesValue(Object actual, BigDecimal actualNumber) {
    if (candidates != null) {
      boolean found = candidates.contains(actual, actualNumber);
      return operator == FilterOperator.IN ? found : !found;
    }
    BigDecimal expectedNumber = number;
    if (operator == FilterOperator.EQUAL) {
      return scalarsEqual(actual, actualNumber, value, expectedNumber);
    }
    if (operator == FilterOperator.NOT_EQUAL) {
      return !scalarsEqual(actual, actualNumber, value, expectedNumber);
    }
    if (actualNumber == null || expectedNumber == null) {
      return false;
    }
    int c = actualNumber.compareTo(expectedNumber);
    return switch (operator) {
      case GREATER -> c > 0;
      case GREATER_EQUAL -> c >= 0;
      case LESS -> c < 0;
      case LESS_EQUAL -> c <= 0;
      default -> throw new IllegalStateException("not an ordering operator: " + operator);
    };
  }

  private static boolean scalarsEqual(
      Object actual, BigDecimal actualNumber, Object expected, BigDecimal expectedNumber) {
    if (actualNumber != null && expectedNumber != null) {
      return actualNumber.compareTo(expectedNumber) == 0;
    }
    if (expected instanceof Boolean || actual instanceof Boolean) {
      return expected instanceof Boolean && expected.equals(actual);
    }
    if (expected == null || actual == null) {
      return expected == null && actual == null;
    }
    return actual instanceof String && expected instanceof String && actual.equals(expected);
  }

  /** Python's {@code ==} between two filters (Decimals by value, and {@code Decimal(1) == True}, as Python has it). */
  public boolean sameAs(Filter other) {
    if (!field.equals(other.field) || operator != other.operator) {
      return false;
    }
    if (value instanceof List<?> mine && other.value instanceof List<?> theirs) {
      if (mine.size() != theirs.size()) {
        return false;
      }
      for (int i = 0; i < mine.size(); i++) {
        if (!pyScalarEquals(mine.get(i), theirs.get(i))) {
          return false;
        }
      }
      return true;
    }
    if (value instanceof List || other.value instanceof List) {
      return false;
    }
    return pyScalarEquals(value, other.value);
  }

  private static BigDecimal pyNumber(Object scalar) {
    if (scalar instanceof BigDecimal d) {
      return d;
    }
    if (scalar instanceof Boolean b) {
      return b ? BigDecimal.ONE : BigDecimal.ZERO;
    }
    return null;
  }

  private static boolean pyScalarEquals(Object a, Object b) {
    BigDecimal left = pyNumber(a);
    BigDecimal right = pyNumber(b);
    if (left != null || right != null) {
      return left != null && right != null && left.compareTo(right) == 0;
    }
    return a == null ? b == null : a.equals(b);
  }

  /** The filter's JSON (numbers as canonical decimal strings), as model.Filter.to_json. */
  public Map<String, Object> toJson() {
    Map<String, Object> json = new LinkedHashMap<>();
    json.put("field", field);
    json.put("operator", operator.name());
    if (value instanceof List<?> items) {
      List<Object> rendered = new ArrayList<>();
      for (Object item : items) {
        rendered.add(scalarJson(item));
      }
      json.put("value", rendered);
    } else {
      json.put("value", scalarJson(value));
    }
    return json;
  }

  private static Object scalarJson(Object scalar) {
    return scalar instanceof BigDecimal d ? Decimals.canonical(d) : scalar;
  }
}
