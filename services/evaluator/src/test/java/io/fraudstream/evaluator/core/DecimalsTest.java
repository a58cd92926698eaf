package io.fraudstream.evaluator.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigDecimal;
import java.math.BigInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class DecimalsTest {
  @ParameterizedTest
  @CsvSource({"-12,-12", "0.10,0.10", "1e3,1E+3", "+.5,0.5", "5.,5", "1E-999999999,1E-999999999"})
  void plainDecimalLiteralsAreNumbers(String text, String value) {
    assertEquals(new BigDecimal(value), Decimals.parseDecimalText(text));
  }

  @ParameterizedTest
  @ValueSource(
      strings = {"", "CRD", "1,5", "0x10", "NaN", "Infinity", "1e", "1e1234567890", " 1", "\u0661", "--1", "."})
  void otherTextIsNot(String text) {
    assertNull(Decimals.parseDecimalText(text));
  }

  /** Longer than a JSON number literal: a string, never parsed (quadratic in its length) nor cached. */
  @Test
  void aDecimalTextIsAtMostAsLongAsAJsonNumberLiteral() {
    String longest = "9".repeat(Json.MAX_NUMBER_CHARS);
    assertEquals(new BigDecimal(longest), Decimals.parseDecimalText(longest));
    assertNull(Decimals.parseDecimalText(longest + "9"));
    assertNull(Decimals.asNumber("1".repeat(1_000_000)));
  }

  @Test
  void asNumberReadsIntegersDecimalsAndLiteralsButNotBooleans() {
    assertEquals(BigDecimal.valueOf(7), Decimals.asNumber(BigInteger.valueOf(7)));
    assertEquals(new BigDecimal("0.1"), Decimals.asNumber(new BigDecimal("0.1")));
    assertEquals(new BigDecimal("2.50"), Decimals.asNumber("2.50"));
    assertNull(Decimals.asNumber(true));
    assertNull(Decimals.asNumber(null));
    assertNull(Decimals.asNumber(java.util.List.of(1)));
  }

  @Test
  void amountsHaveAtMostAHundredDigitsEachSideOfThePoint() {
    assertTrue(Decimals.isAmount(new BigDecimal("9".repeat(100))));
    assertFalse(Decimals.isAmount(new BigDecimal("1" + "0".repeat(100))));
    assertTrue(Decimals.isAmount(new BigDecimal("0." + "0".repeat(99) + "1")));
    assertFalse(Decimals.isAmount(new BigDecimal("0." + "0".repeat(100) + "1")));
    assertTrue(Decimals.isAmount(new BigDecimal("1." + "0".repeat(500))), "trailing zeros do not count");
    assertTrue(Decimals.isAmount(new BigDecimal("0E-5000")), "zero is always an amount");
    assertNull(Decimals.asAmount("1e100"));
    assertEquals(new BigDecimal("1e99"), Decimals.asAmount("1e99"));
  }

  @ParameterizedTest
  @CsvSource({"200000.00,200000", "0.10,0.1", "-0.000,0", "1E+3,1000", "12.5,12.5", "1E+100,1E+100"})
  void theCanonicalTextHasNoTrailingZerosAndNoExponent(String value, String text) {
    assertEquals(text, Decimals.canonical(new BigDecimal(value)));
  }

  @Test
  void adjustedIsTheExponentOfTheMostSignificantDigit() {
    assertEquals(2, Decimals.adjusted(new BigDecimal("123.45")));
    assertEquals(-3, Decimals.adjusted(new BigDecimal("0.00123")));
    assertEquals(0, Decimals.adjusted(BigDecimal.ZERO));
  }

  @Test
  void sumsAreExactAndAveragesRoundToThirtyFourDigitsHalfEven() {
    assertEquals(0, new BigDecimal("0.1").add(new BigDecimal("0.2")).compareTo(new BigDecimal("0.3")));
    assertEquals(new BigDecimal("0.3333333333333333333333333333333333"), Decimals.average(BigDecimal.ONE, 3));
    assertEquals(new BigDecimal("0.6666666666666666666666666666666667"), Decimals.average(BigDecimal.valueOf(2), 3));
    assertEquals(new BigDecimal("2.5"), Decimals.average(BigDecimal.valueOf(5), 2));
    assertTrue(Decimals.isIntegral(new BigDecimal("3.000")));
    assertFalse(Decimals.isIntegral(new BigDecimal("3.001")));
  }
}
