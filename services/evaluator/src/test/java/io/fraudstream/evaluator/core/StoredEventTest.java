package io.fraudstream.evaluator.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class StoredEventTest {
  private static StoredEvent event(List<Object> values) {
    return new StoredEvent(1, 1_000, 2_000, 0, 3, 4, values);
  }

  @Test
  void heapBytesCountsTheEventItsArraysAndWhatOnlyItsValuesHold() {
    // 72 (the object) + 40 (5 references) + 48 (a string of 3 Latin-1 characters: 24 + 16 + 3, aligned) + 40 (a
    // decimal of a long's digits) + 40 (the numbers: the decimal is its own, and an amount, so no amounts array);
    // nothing for the shared MISSING, null and true.
    assertEquals(240, event(Arrays.asList("abc", BigDecimal.ONE, Missing.MISSING, null, true)).heapBytes());
    // A decimal-literal string holds its characters and the number read from it; 24 digits need a BigInteger (three
    // ints of magnitude: 40 + 32).
    assertEquals(72 + 24 + 48 + 40 + 24, event(List.of("7.25")).heapBytes());
    assertEquals(72 + 24 + 40 + (40 + 32) + 24, event(List.of(new BigDecimal("123456789012345678901234"))).heapBytes());
    // The amounts are an array of their own once a number is not an amount.
    assertEquals(72 + 24 + 40 + 24 + 24, event(List.of(new BigDecimal("1E+400"))).heapBytes());
  }

  /**
   * A JSON array or object in a projected field is charged with its elements: a list of half a million numbers
   * charged as 16 bytes let a burst of such events past the window cache's budget.
   */
  @Test
  void heapBytesCountsWhatAnArrayOrObjectValueHolds() throws JsonValueException {
    long empty = event(Arrays.asList((Object) null)).heapBytes();
    Object numbers = Json.parse("[" + "0,".repeat(499_999) + "0]");
    long list = event(Arrays.asList(numbers)).heapBytes() - empty;
    assertTrue(list >= 500_000L * (40 + 4), "each BigInteger and its reference: " + list);
    Object nested = Json.parse("{\"a\": [\"xyz\", {\"b\": 1}], \"c\": null}");
    long map = event(Arrays.asList(nested)).heapBytes() - empty;
    // the outer map (56 + HashMap's default table of 16: 80 + 2 entries: 80) with "a" and "c" (48 each), the list
    // (24 + 24) with "xyz" (48), the inner map (56 + 80 + 40) with "b" (48) and 1 (a BigInteger: 40 + 24)
    assertEquals(56 + 80 + 80 + 48 + 48 + 24 + 24 + 48 + 56 + 80 + 40 + 48 + 40 + 24, map);
  }

  @Test
  void sharingHoldsEqualStringsByReferenceAndLeavesTheirBytesOut() {
    Object[] shared = {"payer-1", null, "CSH"};
    // copies, as a transaction's parse or a stored row's decoding makes them
    StoredEvent own = event(List.of(new String("payer-1"), "x", new String("CSH"), "7.25"));
    StoredEvent sharing = own.sharing(shared);
    assertSame(own.number(3), sharing.number(3), "the same number as the event it shares with");
    assertSame(shared[0], sharing.value(0));
    assertSame(shared[2], sharing.value(2));
    assertEquals(own, sharing);
    assertEquals(own.heapBytes() - HeapSizes.value("payer-1") - HeapSizes.value("CSH"), sharing.heapBytes());
    assertSame(sharing, sharing.sharing(shared), "nothing left to share");
    StoredEvent other = event(List.of("payer-2", "x", "CRD"));
    assertSame(other, other.sharing(shared), "no equal string");
  }

  @Test
  void numbersAndAmountsAreTheValuesReadAsTheRulesReadThem() {
    BigDecimal amount = new BigDecimal("12.50");
    StoredEvent event =
        event(
            Arrays.asList(
                "acct-1", amount, "7.25", 42L, new BigInteger("3"), new BigDecimal("1E+400"), Missing.MISSING, null, true));
    assertSame(amount, event.number(1), "a decimal value is its own number");
    assertSame(amount, event.amount(1));
    assertEquals(new BigDecimal("7.25"), event.amount(2), "a decimal-literal string is a number");
    assertEquals(BigDecimal.valueOf(42), event.amount(3));
    assertEquals(BigDecimal.valueOf(3), event.amount(4));
    assertEquals(new BigDecimal("1E+400"), event.number(5), "a number beyond the amount bounds");
    assertNull(event.amount(5), "is not an amount");
    for (int position : new int[] {0, 6, 7, 8}) {
      assertNull(event.number(position), "not a number: " + event.value(position));
      assertNull(event.amount(position));
    }
  }

  @Test
  void anEventWithoutNumbersAnswersNullForEveryPositionAndChecksTheIndex() {
    StoredEvent event = event(List.of("a", "b"));
    assertNull(event.number(1));
    assertNull(event.amount(0));
    assertThrows(IndexOutOfBoundsException.class, () -> event.number(2));
    assertThrows(IndexOutOfBoundsException.class, () -> event.amount(-1));
  }

  @Test
  void theEventKeepsItsOwnCopyOfTheValuesAndGivesOutAReadOnlyView() {
    List<Object> values = new ArrayList<>(List.of("a", new BigDecimal("5")));
    StoredEvent event = event(values);
    values.set(0, "changed");
    assertEquals(List.of("a", new BigDecimal("5")), event.values());
    assertThrows(UnsupportedOperationException.class, () -> event.values().set(0, "x"));
  }

  @Test
  void equalityIsByEveryComponentAndValue() {
    StoredEvent event = event(List.of("a", new BigDecimal("5")));
    assertEquals(event, event(List.of("a", new BigDecimal("5"))));
    assertEquals(event.hashCode(), event(List.of("a", new BigDecimal("5"))).hashCode());
    assertNotEquals(event, event(List.of("a", new BigDecimal("5.0"))), "decimals differ by scale, as in the store");
    assertNotEquals(event, new StoredEvent(2, 1_000, 2_000, 0, 3, 4, List.of("a", new BigDecimal("5"))));
    assertEquals(event.withValues(new Object[] {"b"}, null), event(List.of("b")));
  }
}
