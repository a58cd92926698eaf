package io.fraudstream.evaluator.core;

import java.math.BigDecimal;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The candidates of an IN/NOT_IN filter, indexed: whether a value equals one of them, as {@link Filter} defines
 * equality, costs a hash lookup whatever their count (a blocklist of tens of thousands of ids is one rule).
 *
 * <p>Equality sorts every value into one class: a number (a value that reads as one, numeric strings included)
 * equals exactly the numbers numerically equal to it; otherwise a string equals the same string, a boolean the same
 * boolean, null null, and nothing else equals anything. Two strings of the same text read alike, so a string that
 * reads as no number never equals a number.
 */
public final class CandidateSet {
  private final Set<BigDecimal> numbers = new HashSet<>();
  private final Set<String> strings = new HashSet<>();
  private final Set<Boolean> booleans = new HashSet<>();
  private boolean hasNull;

  /** The set of {@code candidates}, {@code numbers} holding what each reads as (null where it is no number). */
  CandidateSet(List<?> candidates, List<BigDecimal> numbers) {
    for (int i = 0; i < candidates.size(); i++) {
      Object candidate = candidates.get(i);
      BigDecimal number = numbers.get(i);
      if (number != null) {
        this.numbers.add(key(number));
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
      return numbers.contains(key(actualNumber));
    }
    if (actual instanceof Boolean b) {
      return booleans.contains(b);
    }
    if (actual == null) {
      return hasNull;
    }
    return actual instanceof String s && strings.contains(s);
  }

  /** One representative per numeric value: BigDecimal's equals and hashCode see the scale, compareTo does not. */
  private static BigDecimal key(BigDecimal number) {
    return number.signum() == 0 ? BigDecimal.ZERO : number.stripTrailingZeros();
  }
}
