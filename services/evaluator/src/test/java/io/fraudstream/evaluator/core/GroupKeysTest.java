package io.fraudstream.evaluator.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.math.BigDecimal;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class GroupKeysTest {
  private static Map<String, Object> fields(String json) throws JsonValueException {
    @SuppressWarnings("unchecked")
    Map<String, Object> fields = (Map<String, Object>) Json.parse(json);
    return fields;
  }

  private static String key(List<String> keyGroup, String json) throws JsonValueException {
    return GroupKeys.groupKey(keyGroup, fields(json));
  }

  @Test
  void aGroupKeyIsTheCompactJsonOfNamesAndValues() throws JsonValueException {
    assertEquals("[[\"payerId\"],[\"p1\"]]", key(List.of("payerId"), "{\"payerId\": \"p1\", \"x\": 1}"));
    assertEquals(
        "[[\"beneficiaryId\",\"payerId\"],[7,\"caf\u00e9\"]]",
        key(List.of("beneficiaryId", "payerId"), "{\"payerId\": \"caf\u00e9\", \"beneficiaryId\": 7}"));
  }

  @Test
  void aTransactionWithoutAGroupingFieldHasNoGroup() throws JsonValueException {
    assertNull(key(List.of("payerId", "beneficiaryId"), "{\"payerId\": \"p1\"}"));
    assertEquals("[[\"payerId\"],[null]]", key(List.of("payerId"), "{\"payerId\": null}"), "null is a value");
  }

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {"7|7.0", "7|7E0", "7|7.000", "0|-0.0", "0.5|0.50", "1E+2|100"})
  void numbersAreOneGroupByValue(String left, String right) throws JsonValueException {
    List<String> group = List.of("payerId");
    assertEquals(key(group, "{\"payerId\": " + left + "}"), key(group, "{\"payerId\": " + right + "}"));
  }

  @Test
  void aNumberAndAStringAreDifferentGroups() throws JsonValueException {
    List<String> group = List.of("payerId");
    assertNotEquals(key(group, "{\"payerId\": 7}"), key(group, "{\"payerId\": \"7\"}"));
    assertNotEquals(key(group, "{\"payerId\": true}"), key(group, "{\"payerId\": 1}"));
  }

  @Test
  void nestedValuesAreCanonicalWithSortedKeys() throws JsonValueException {
    assertEquals(
        "[[\"payerId\"],[{\"a\":[1,0.5],\"b\":2}]]",
        key(List.of("payerId"), "{\"payerId\": {\"b\": 2.0, \"a\": [1E0, 0.50]}}"));
  }

  @Test
  void theKeyGroupIsReadBackFromAGroupKey() {
    assertEquals(List.of("a", "b"), GroupKeys.keyGroupOf("[[\"a\",\"b\"],[1,2]]"));
    assertThrows(IllegalArgumentException.class, () -> GroupKeys.keyGroupOf("{}"));
    assertThrows(IllegalArgumentException.class, () -> GroupKeys.keyGroupOf("not json"));
    assertThrows(IllegalArgumentException.class, () -> GroupKeys.keyGroupOf("[[\"a\"]]"));
    assertThrows(IllegalArgumentException.class, () -> GroupKeys.keyGroupOf("[[\"a\""));
    assertThrows(IllegalArgumentException.class, () -> GroupKeys.keyGroupOf("[[1],[2]]"));
    assertEquals(List.of("a]\",b", "c"), GroupKeys.keyGroupOf("[[\"a]\\\",b\",\"c\"],[1,2]]"));
  }

  /**
   * A transaction may group by a value as deep as the parser takes, or by a number whose normalized text is longer
   * than a number it reads: its key nests two levels deeper, and holds that text. Reading the key group from such
   * a key failed the task before, on every retry (the first key of its key group a bucket read after a restart).
   */
  @Test
  void theKeyGroupIsReadFromKeysWhoseValuesTheParserWouldRefuse() throws JsonValueException {
    int depth = Json.MAX_NESTING_DEPTH - 1; // the transaction object is the first level
    String nested = "[".repeat(depth) + "]".repeat(depth);
    Map<String, Object> deep = Map.of("payerId", Json.parse(nested), "x", BigDecimal.ONE);
    String deepKey = GroupKeys.groupKey(List.of("payerId", "x"), deep);
    assertThrows(JsonValueException.class, () -> Json.parse(deepKey));
    assertEquals(List.of("payerId", "x"), GroupKeys.keyGroupOf(deepKey));

    String digits = "1".repeat(Json.MAX_NUMBER_CHARS - 6) + "e-2000"; // at the literal limit
    Map<String, Object> longNumber = Map.of("payerId", Json.parse(digits));
    String longKey = GroupKeys.groupKey(List.of("payerId"), longNumber);
    assertThrows(JsonValueException.class, () -> Json.parse(longKey));
    assertEquals(List.of("payerId"), GroupKeys.keyGroupOf(longKey));
  }

  /** Python's {@code zlib.crc32(key.encode()) % buckets}, computed there. */
  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {
        "[[\"payerId\"],[\"p1\"]]|2|1",
        "[[\"payerId\"],[\"p3\"]]|2|0",
        "[[\"payerId\"],[\"p1\"]]|7|5",
        "[[\"payerId\"],[\"p4\"]]|7|2"
      })
  void bucketsAreTheCrc32OfTheKeyAsPythonComputesIt(String groupKey, int buckets, int bucket) {
    assertEquals(bucket, GroupKeys.bucketOf(groupKey, buckets));
  }
}
