package io.fraudstream.evaluator.core;

import java.math.BigDecimal;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;

/**
 * The candidates of an IN/NOT_IN filter, indexed: whether a value equals one of them, as {@link Filter} defines
 * equality, costs one lookup whatever their count (a blocklist of tens of thousands of ids is one rule): a hash
 * lookup for strings, a binary search of {@code compareTo} for numbers (no arithmetic on the value looked up, so a
 * 1000-digit number costs no more than its comparisons). Two sets are equal when they hold the same candidates.
 *
 * <p>Equality sorts every value into one class: a number (a value that reads as one, numeric strings included)
 * equals exactly the numbers numerically equal to it; otherwise a string equals the same string, a boolean the same
 * boolean, null null, and nothing else equals anything. Two strings of the same text read alike, so a string that
 * reads as no number never equals a number.
 */
public final class CandidateSet {
  private final TreeSet<BigDecimal> numbers = new TreeSet<>(); // compareTo: equal by value, whatever the scale
  private final Set<String> strings = new HashSet<>();
  private final Set<Boolean> booleans = new HashSet<>();
  private boolean hasNull;

  /** The set of {@code candidates}, each a scalar as a filter value holds it. */
  CandidateSet(List<?> candidates) {
    for (Object candidate : candidates) {
      BigDecimal number = Decimals.asNumber(candidate);
      if (number != null) {
        this.numbers.add(number.signum() == 0 ? BigDecimal.ZERO : number.stripTrailingZeros());
      } else if (candidate instanceof Boolean b) {
        booleans.add(b);
      } else if (candidate == null) {
        hasNull = true;
      } else if (candidate instanceof String s) {
        strings.add(s);
      }
    }
  }

  /** Whether {@code actual}, which reads as {@code actualNumber} (null: no number), equals some candidate. */
  public boolean contains(Object actual, BigDecimal actualNumber) {
    if (actualNumber != null) {
      return numbers.contains(actualNumber);
    }
    if (actual instanceof Boolean b) {
      return booleans.contains(b);
    }
    if (actual == null) {
      return hasNull;
    }
    return actual instanceof String s && strings.contains(s);
  }

  @Override
  public boolean equals(Object other) {
    return other instanceof CandidateSet that
        && numbers.equals(that.numbers)
        && strings.equals(that.strings)
        && booleans.equals(that.booleans)
        && hasNull == that.hasNull;
  }

  /** Consistent with equals: each number is held in one representation (without trailing zeros). */
  @Override
  public int hashCode() {
    return Objects.hash(numbers, strings, booleans, hasNull);
  }
}
