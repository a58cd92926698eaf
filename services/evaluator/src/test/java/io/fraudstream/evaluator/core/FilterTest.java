package io.fraudstream.evaluator.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

class FilterTest {
  private static final String FIELD = "payerId";

  private static boolean in(List<Object> candidates, Object actual) {
    return new Filter(FIELD, FilterOperator.IN, Collections.unmodifiableList(candidates)).matchesValue(actual);
  }

  private static boolean notIn(List<Object> candidates, Object actual) {
    return new Filter(FIELD, FilterOperator.NOT_IN, Collections.unmodifiableList(candidates))
        .matchesValue(actual);
  }

  /** The definition IN is held to: some candidate, as an EQUAL filter's value, matches. */
  private static boolean equalsSome(List<Object> candidates, Object actual) {
    for (Object candidate : candidates) {
      if (new Filter(FIELD, FilterOperator.EQUAL, candidate).matchesValue(actual)) {
        return true;
      }
    }
    return false;
  }

  private static Object randomValue(Random random) {
    BigDecimal number = BigDecimal.valueOf(random.nextInt(7) - 3, random.nextInt(5) - 2);
    return switch (random.nextInt(11)) {
      case 0, 1 -> number;
      case 2 -> number.toPlainString();
      case 3 -> number.toString();
      case 4 -> (long) (random.nextInt(7) - 3);
      case 5 -> BigInteger.valueOf(random.nextInt(7) - 3);
      case 6 -> random.nextBoolean();
      case 7 -> null;
      case 8 -> List.of("a", "1").subList(0, random.nextInt(3));
      case 9 -> Map.of("a", "1");
      default -> List.of("a", "b", "", "1e", "A", "-", "one").get(random.nextInt(7));
    };
  }

  @Test
  void inAndNotInAgreeWithEqualToSomeCandidateOverRandomValues() {
    Random random = new Random(20261208);
    for (int trial = 0; trial < 20_000; trial++) {
      List<Object> candidates = new ArrayList<>();
      int size = 1 + random.nextInt(6);
      for (int i = 0; i < size; i++) {
        Object candidate = randomValue(random);
        if (!(candidate instanceof List) && !(candidate instanceof Map)) {
          candidates.add(candidate instanceof Long || candidate instanceof BigInteger
              ? Decimals.asNumber(candidate) : candidate);
        }
      }
      if (candidates.isEmpty()) {
        continue;
      }
      Object actual = randomValue(random);
      boolean expected = equalsSome(candidates, actual);
      assertEquals(expected, in(candidates, actual), () -> candidates + " IN, actual " + actual);
      assertEquals(!expected, notIn(candidates, actual), () -> candidates + " NOT_IN, actual " + actual);
    }
  }

  @Test
  void numbersAreEqualByValueWhateverTheirScaleOrSpelling() {
    List<Object> candidates = List.of(new BigDecimal("10.0"), new BigDecimal("0.000"), "2.50", "-3E+1");
    for (Object actual : List.of(10L, "1E+1", new BigDecimal("10.000"), "0", 0L, new BigDecimal("-0.0"),
        new BigDecimal("2.5"), "2.5000", BigInteger.valueOf(-30), "-30.0")) {
      assertTrue(in(candidates, actual), () -> actual + " is one of " + candidates);
    }
    for (Object actual : List.of(11L, "10.01", "2.51", "abc", true, false)) {
      assertFalse(in(candidates, actual), () -> actual + " is none of " + candidates);
    }
  }

  @Test
  void booleansNullAndStringsMatchOnlyTheirOwnKind() {
    List<Object> candidates = Arrays.asList(true, null, "CSH", BigDecimal.ONE);
    assertTrue(in(candidates, true));
    assertFalse(in(candidates, false));
    assertTrue(in(candidates, null));
    assertTrue(in(candidates, "CSH"));
    assertFalse(in(candidates, "csh"));
    assertTrue(in(candidates, "1.0"), "a numeric string reads as the number 1");
    assertFalse(in(List.of("1"), true), "a boolean is no number");
    assertFalse(in(candidates, List.of()));
    assertFalse(in(candidates, Map.of()));
    assertTrue(notIn(candidates, Map.of()), "a present non-scalar value is in no list");
  }

  @Test
  void aDigitStringTooLongToBeANumberIsAString() {
    String digits = "1" + "0".repeat(1_000);
    assertTrue(in(List.of(digits), digits));
    assertFalse(in(List.of(digits), new BigDecimal(digits)));
    assertFalse(in(List.of(new BigDecimal(digits)), digits));
  }

  @Test
  void aThousandDigitNumberIsLookedUpByValue() {
    String digits = "1" + "0".repeat(999);
    assertTrue(in(List.of(new BigDecimal("1E+999")), digits));
    assertTrue(in(List.of(digits), new BigDecimal("1.000E+999")));
    assertFalse(in(List.of(new BigDecimal("1E+998")), digits));
  }

  @Test
  void filtersOfTheSameCandidatesAreEqualWithEqualHashes() {
    List<Object> spelled = Arrays.asList("CSH", new BigDecimal("2.50"), null, true);
    List<Object> respelled = Arrays.asList(true, new BigDecimal("2.5"), "CSH", null, "CSH");
    Filter one = new Filter(FIELD, FilterOperator.IN, Collections.unmodifiableList(spelled));
    Filter other = new Filter(FIELD, FilterOperator.IN, Collections.unmodifiableList(spelled));
    assertEquals(one, other);
    assertEquals(one.hashCode(), other.hashCode());
    CandidateSet reordered = new Filter(FIELD, FilterOperator.IN, respelled).candidates();
    assertEquals(one.candidates(), reordered);
    assertEquals(one.candidates().hashCode(), reordered.hashCode());
    assertFalse(one.candidates().equals(new Filter(FIELD, FilterOperator.IN, List.of("CSH")).candidates()));
  }

  @Test
  void aBlocklistOfFiftyThousandIdsMatchesItsMembersOnly() {
    List<Object> ids = new ArrayList<>();
    for (int i = 0; i < 50_000; i++) {
      ids.add("payer-" + i);
    }
    Filter blocklist = new Filter(FIELD, FilterOperator.IN, Collections.unmodifiableList(ids));
    assertTrue(blocklist.matchesValue("payer-49999"));
    assertFalse(blocklist.matchesValue("payer-50000"));
    assertEquals(ids, blocklist.value(), "the filter keeps its list, in order, for its JSON");
  }
}
