package io.fraudstream.evaluator.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class JsonTest {
  private static String nested(String open, String close, int depth) {
    return open.repeat(depth) + close.repeat(depth);
  }

  private static String message(String text) {
    return assertThrows(JsonValueException.class, () -> Json.parse(text)).getMessage();
  }

  @Test
  void numbersStayExact() throws JsonValueException {
    Map<?, ?> parsed = (Map<?, ?>) Json.parse("{\"i\": 12345678901234567890123, \"d\": 0.10, \"e\": 1E+2}");
    assertEquals(new BigInteger("12345678901234567890123"), parsed.get("i"));
    assertEquals(new BigDecimal("0.10"), parsed.get("d"));
    assertEquals(2, ((BigDecimal) parsed.get("d")).scale(), "0.10 keeps its scale");
    assertInstanceOf(BigDecimal.class, parsed.get("e"));
    assertEquals("{\"i\":12345678901234567890123,\"d\":0.10,\"e\":1E+2}", Json.write(parsed));
  }

  @Test
  void objectsKeepFirstAppearanceOrderAndTheLastDuplicate() throws JsonValueException {
    Map<?, ?> parsed = (Map<?, ?>) Json.parse("{\"b\": 1, \"a\": 2, \"b\": 3}");
    assertEquals(List.of("b", "a"), new ArrayList<>(parsed.keySet()));
    assertEquals(BigInteger.valueOf(3), parsed.get("b"));
  }

  /** Jackson's default limit on names (50 000 characters) is lifted: Python's json has none. */
  @Test
  void aNameOfAnyLengthIsRead() throws JsonValueException {
    String name = "n".repeat(1_000_000);
    assertEquals(Map.of(name, BigInteger.ONE), Json.parse("{\"" + name + "\": 1}"));
  }

  @Test
  void scalarsAndContainers() throws JsonValueException {
    assertEquals(
        Arrays.asList(null, true, false, "x", List.of(), Map.of()),
        Json.parse("[null, true, false, \"x\", [], {}]"));
  }

  @Test
  void nestingUpToTheLimitIsRead() throws JsonValueException {
    Object parsed = Json.parse(nested("[", "]", Json.MAX_NESTING_DEPTH));
    for (int depth = 1; depth < Json.MAX_NESTING_DEPTH; depth++) {
      parsed = ((List<?>) parsed).get(0);
    }
    assertEquals(List.of(), parsed);
  }

  @Test
  void nestingBeyondTheLimitIsRefused() {
    String expected = "JSON nested deeper than 64 levels";
    assertEquals(expected, message(nested("[", "]", Json.MAX_NESTING_DEPTH + 1)));
    String objects = "{\"a\":".repeat(Json.MAX_NESTING_DEPTH) + "{}" + "}".repeat(Json.MAX_NESTING_DEPTH);
    assertEquals(expected, message(objects));
    assertEquals(expected, message(nested("[", "]", 10_000)), "far deeper is refused the same way, not overflowed");
  }

  @Test
  void numberLiteralsUpToTheLimitAreRead() throws JsonValueException {
    String digits = "9".repeat(Json.MAX_NUMBER_CHARS);
    assertEquals(new BigInteger(digits), Json.parse(digits));
    String decimal = "0." + "1".repeat(Json.MAX_NUMBER_CHARS - 2);
    assertEquals(new BigDecimal(decimal), Json.parse(decimal));
  }

  @ParameterizedTest
  @ValueSource(strings = {"integer", "decimal"})
  void numberLiteralsBeyondTheLimitAreRefused(String kind) {
    String literal =
        kind.equals("integer")
            ? "9".repeat(Json.MAX_NUMBER_CHARS + 1)
            : "0." + "1".repeat(Json.MAX_NUMBER_CHARS - 1);
    assertEquals("JSON number longer than 1000 characters", message(literal));
    assertEquals("JSON number longer than 1000 characters", message("[" + literal + "]"));
  }

  @Test
  void exponentsWithinTheBoundAreRead() throws JsonValueException {
    assertEquals(new BigDecimal("1E+999999999"), Json.parse("1e999999999"));
    assertEquals(new BigDecimal("1E-999999999"), Json.parse("1E-999999999"));
  }

  @ParameterizedTest
  @ValueSource(strings = {"1e1000000000", "1E-1000000000", "2.5e+99999999999"})
  void exponentsBeyondTheBoundAreRefused(String literal) {
    assertEquals("JSON number exponent beyond +-999999999", message(literal));
  }

  @ParameterizedTest
  @ValueSource(strings = {"NaN", "Infinity", "-Infinity", "{\"a\": NaN}", "", "   ", "{} {}", "[1,]", "{'a': 1}"})
  void notJsonIsRefused(String text) {
    assertTrue(message(text).startsWith("not JSON: "), text);
  }

  @Test
  void invalidUtf8IsRefusedWithItsPosition() {
    byte[] data = {'"', 'a', (byte) 0xff, '"'};
    JsonValueException refused = assertThrows(JsonValueException.class, () -> Json.parse(data));
    assertEquals("not valid UTF-8 at byte 2", refused.getMessage());
  }

  @Test
  void utf8BytesAreRead() throws JsonValueException {
    assertEquals("\u00e9\ud83d\ude00", Json.parse("\"\u00e9\ud83d\ude00\"".getBytes(StandardCharsets.UTF_8)));
  }

  @Test
  void loneSurrogatesAreEscapedOnOutputAndPairsKept() throws JsonValueException {
    Object parsed = Json.parse("[\"\\ud800x\", \"y\\udc00\", \"\\ud83d\\ude00\"]");
    assertEquals(List.of("\ud800x", "y\udc00", "\ud83d\ude00"), parsed);
    String written = Json.write(parsed);
    assertEquals("[\"\\ud800x\",\"y\\udc00\",\"\ud83d\ude00\"]", written);
    // The output always encodes to UTF-8 and reads back to the same strings.
    byte[] utf8 = written.getBytes(StandardCharsets.UTF_8);
    assertEquals(written, new String(utf8, StandardCharsets.UTF_8));
    assertEquals(parsed, Json.parse(utf8));
  }

  @Test
  void writeEscapesControlCharactersAndKeepsNonAscii() {
    assertEquals("\"a\\\"b\\\\c\\n\\t\\u0001\u00e9\"", Json.write("a\"b\\c\n\t\u0001\u00e9"));
    StringBuilder ascii = new StringBuilder();
    Json.quote("\u00e9\ud83d\ude00", true, ascii);
    assertEquals("\"\\u00e9\\ud83d\\ude00\"", ascii.toString());
  }

  @Test
  void quoteEscapesWhereverTheCharacterIs() {
    assertEquals("\"payer-1\"", Json.write("payer-1"));
    assertEquals("\"\\nab\"", Json.write("\nab"));
    assertEquals("\"ab\\\"\"", Json.write("ab\""));
    assertEquals("\"\"", Json.write(""));
    assertEquals("\"a\u007fb\"", Json.write("a\u007fb"));
    StringBuilder ascii = new StringBuilder();
    Json.quote("a\u007fb", true, ascii);
    assertEquals("\"a\\u007fb\"", ascii.toString());
  }

  @Test
  void writeSortedOrdersKeysByCodePointAtEveryLevel() {
    Map<String, Object> inner = new LinkedHashMap<>();
    inner.put("\ud83d\ude00", 1);
    inner.put("\uffff", 2);
    Map<String, Object> outer = new LinkedHashMap<>();
    outer.put("b", inner);
    outer.put("a", List.of(inner));
    // By code point, U+1F600 sorts after U+FFFF (by UTF-16 unit it would not).
    String sorted = "{\"\uffff\":2,\"\ud83d\ude00\":1}";
    assertEquals("{\"a\":[" + sorted + "],\"b\":" + sorted + "}", Json.writeSorted(outer));
    assertTrue(Json.write(outer).startsWith("{\"b\":{\"\ud83d\ude00\":1,"), "write keeps insertion order");
  }

  @Test
  void rawJsonIsWrittenVerbatimAndOtherTypesAreRefused() {
    assertEquals("[{\"x\": 1.50}]", Json.write(List.of(new Json.RawJson("{\"x\": 1.50}"))));
    assertThrows(IllegalArgumentException.class, () -> Json.write(1.5d));
  }
}
