package io.fraudstream.evaluator.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/** KeyGroupTable: a group key's key group found by prefix is the one its JSON names. */
class KeyGroupTableTest {
  /** Name fragments that make names prefixes of one another and need escaping. */
  private static final String[] NAME_PARTS = {
    "a", "b", "ab", "\"", "\\", ",", "]", "[", "\u00e9", " ", "\u0001", "\ud83d\ude00", "\ud800"
  };

  private static String randomName(Random random) {
    StringBuilder name = new StringBuilder();
    for (int parts = random.nextInt(3); parts >= 0; parts--) {
      name.append(NAME_PARTS[random.nextInt(NAME_PARTS.length)]);
    }
    return name.toString();
  }

  /** Sorted, distinct names, as a rule's groupBy is kept. */
  private static List<String> randomKeyGroup(Random random) {
    TreeSet<String> names = new TreeSet<>();
    for (int count = random.nextInt(3); count >= 0; count--) {
      names.add(randomName(random));
    }
    return List.copyOf(names);
  }

  private static Object randomValue(Random random, int depth) {
    switch (random.nextInt(depth > 1 ? 5 : 7)) {
      case 0:
        return randomName(random);
      case 1:
        return new BigDecimal(random.nextInt(2001) - 1000).movePointLeft(random.nextInt(4));
      case 2:
        return random.nextBoolean();
      case 3:
        return null;
      case 4:
        return "[[" + randomName(random) + "]]";
      case 5:
        List<Object> items = new ArrayList<>();
        for (int i = random.nextInt(3); i > 0; i--) {
          items.add(randomValue(random, depth + 1));
        }
        return items;
      default:
        Map<String, Object> fields = new LinkedHashMap<>();
        for (int i = random.nextInt(3); i > 0; i--) {
          fields.put(randomName(random), randomValue(random, depth + 1));
        }
        return fields;
    }
  }

  private static String randomGroupKey(Random random, List<String> keyGroup) {
    Map<String, Object> fields = new HashMap<>();
    for (String name : keyGroup) {
      fields.put(name, randomValue(random, 0));
    }
    return GroupKeys.groupKey(keyGroup, fields);
  }

  @Test
  void everyKeyIsAnsweredWithItsParsedKeyGroupsValueMadeOnce() {
    Random random = new Random(7);
    for (int trial = 0; trial < 200; trial++) {
      List<List<String>> keyGroups = new ArrayList<>();
      for (int i = random.nextInt(6); i >= 0; i--) {
        keyGroups.add(randomKeyGroup(random));
      }
      Map<List<String>, Integer> made = new HashMap<>();
      KeyGroupTable<List<String>> table =
          new KeyGroupTable<>(
              256,
              keyGroup -> {
                made.merge(keyGroup, 1, Integer::sum);
                return keyGroup;
              });
      for (int read = 0; read < 50; read++) {
        String groupKey = randomGroupKey(random, keyGroups.get(random.nextInt(keyGroups.size())));
        assertEquals(GroupKeys.keyGroupOf(groupKey), table.get(groupKey), groupKey);
      }
      made.values().forEach(times -> assertEquals(1, times, "a value is made once per key group: " + made));
      assertEquals(made.keySet().size(), table.values().size());
    }
  }

  @Test
  void keyGroupsWhoseNamesArePrefixesOfOneAnotherAreTold() {
    List<List<String>> keyGroups =
        List.of(List.of("a"), List.of("a", "b"), List.of("ab"), List.of("a\""), List.of("a,"), List.of("a", "b,"));
    List<List<String>> reversed = new ArrayList<>(keyGroups);
    Collections.reverse(reversed);
    for (List<List<String>> order : List.of(keyGroups, reversed)) {
      KeyGroupTable<List<String>> table = new KeyGroupTable<>(256, keyGroup -> keyGroup);
      for (int round = 0; round < 2; round++) {
        for (List<String> keyGroup : order) {
          Map<String, Object> fields = new HashMap<>();
          keyGroup.forEach(name -> fields.put(name, "b\"],[\"x"));
          assertEquals(keyGroup, table.get(GroupKeys.groupKey(keyGroup, fields)));
        }
      }
    }
  }

  @Test
  void aTableBeyondItsCapacityForgetsAndStillAnswers() {
    List<List<String>> made = new ArrayList<>();
    KeyGroupTable<List<String>> table =
        new KeyGroupTable<>(
            2,
            keyGroup -> {
              made.add(keyGroup);
              return keyGroup;
            });
    String a = GroupKeys.groupKey(List.of("a"), Map.of("a", "1"));
    String b = GroupKeys.groupKey(List.of("b"), Map.of("b", "1"));
    String c = GroupKeys.groupKey(List.of("c"), Map.of("c", "1"));
    List<String> first = table.get(a);
    table.get(b);
    assertSame(first, table.get(a), "seen: not made again");
    assertEquals(List.of("c"), table.get(c));
    assertEquals(List.of(List.of("c")), table.values(), "the third key group made the table forget");
    assertEquals(List.of("a"), table.get(a));
    assertEquals(List.of(List.of("a"), List.of("b"), List.of("c"), List.of("a")), made);
  }

  @Test
  void aStringStartingWithAKnownPrefixIsAnsweredWithoutParsing() {
    KeyGroupTable<List<String>> table = new KeyGroupTable<>(256, keyGroup -> keyGroup);
    table.get(GroupKeys.groupKey(List.of("a"), Map.of("a", "1")));
    assertEquals(List.of("a"), table.get("[[\"a\"],not json"), "the contract holds for group keys only");
  }

  @Test
  void aStringThatIsNoGroupKeyIsRefused() {
    KeyGroupTable<List<String>> table = new KeyGroupTable<>(256, keyGroup -> keyGroup);
    assertThrows(IllegalArgumentException.class, () -> table.get("not json"));
    assertThrows(IllegalArgumentException.class, () -> table.get("{}"));
    assertThrows(IllegalArgumentException.class, () -> new KeyGroupTable<>(0, keyGroup -> keyGroup));
  }
}
