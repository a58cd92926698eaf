package io.fraudstream.evaluator.core;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

class RoutesTest {
  private static final List<String> PAYER = List.of("payerId");
  private static final List<String> PAIR = List.of("beneficiaryId", "payerId");
  private static final List<String> COUNTRY = List.of("country");

  private static byte[] bytes(String json) {
    return json.getBytes(StandardCharsets.UTF_8);
  }

  /** What the routes must be: the reporter and the bucket of each group the transaction has, ascending. */
  private static int[] expected(String json, List<List<String>> keyGroups, int partition, long offset, int buckets)
      throws JsonValueException {
    TreeSet<Integer> reached = new TreeSet<>();
    reached.add(Routes.reporterOf(partition, offset, buckets));
    @SuppressWarnings("unchecked")
    Map<String, Object> fields = (Map<String, Object>) Json.parse(json);
    for (List<String> keyGroup : keyGroups) {
      String key = GroupKeys.groupKey(keyGroup, fields);
      if (key != null) {
        reached.add(GroupKeys.bucketOf(key, buckets));
      }
    }
    return reached.stream().mapToInt(Integer::intValue).toArray();
  }

  @Test
  void aTransactionReachesItsReporterAndTheBucketOfEachOfItsGroups() throws JsonValueException {
    Random random = new Random(12);
    List<List<String>> keyGroups = List.of(PAYER, PAIR, COUNTRY);
    for (int buckets : new int[] {1, 2, 3, 4, 8}) {
      Routes routes = Routes.of(buckets, keyGroups);
      for (int i = 0; i < 2_000; i++) {
        StringBuilder json = new StringBuilder("{\"eventTime\": 1");
        if (random.nextInt(4) > 0) {
          json.append(", \"payerId\": \"p").append(random.nextInt(1_000)).append('"');
        }
        if (random.nextBoolean()) {
          json.append(", \"beneficiaryId\": ").append(random.nextInt(50)).append(random.nextBoolean() ? ".0" : "");
        }
        if (random.nextInt(5) == 0) {
          json.append(", \"country\": [\"").append((char) ('a' + random.nextInt(26))).append("\"]");
        }
        String tx = json.append('}').toString();
        int partition = random.nextInt(6);
        long offset = random.nextLong() >>> 1;
        assertArrayEquals(
            expected(tx, keyGroups, partition, offset, buckets), routes.of(bytes(tx), partition, offset), tx);
      }
    }
  }

  @Test
  void aRecordThatIsNotAJsonObjectReachesItsReporterAlone() {
    Routes routes = Routes.of(4, List.of(PAYER));
    int reporter = Routes.reporterOf(1, 17, 4);
    for (String value : new String[] {"not json", "[\"payerId\"]", "\"p1\"", "", "{\"payerId\": "}) {
      assertArrayEquals(new int[] {reporter}, routes.of(bytes(value), 1, 17), value);
    }
    assertArrayEquals(new int[] {reporter}, routes.of(null, 1, 17), "a tombstone");
  }

  @Test
  void withoutKeyGroupsATransactionReachesItsReporterAlone() {
    Routes routes = Routes.of(3, List.of());
    assertArrayEquals(new int[] {Routes.reporterOf(0, 5, 3)}, routes.of(bytes("{\"payerId\": \"p1\"}"), 0, 5));
  }

  @Test
  void reportersSpreadOverTheBuckets() {
    for (int buckets : new int[] {2, 3, 8}) {
      int[] reports = new int[buckets];
      for (int partition = 0; partition < 3; partition++) {
        for (long offset = 0; offset < 100; offset++) {
          reports[Routes.reporterOf(partition, offset, buckets)]++;
        }
      }
      for (int bucket = 0; bucket < buckets; bucket++) {
        String what = "bucket " + bucket + " of " + buckets + ": " + reports[bucket];
        assertTrue(reports[bucket] >= 300 / buckets - 1, what);
      }
    }
  }

  @Test
  void routesGrowWithTheKeyGroupsTheyLearn() {
    Routes payers = Routes.of(2, List.of(PAYER));
    assertSame(payers, payers.with(List.of(List.of("payerId"))), "nothing new: the same routes");
    Routes both = payers.with(List.of(PAIR, PAYER));
    assertEquals(List.of(PAIR, PAYER), both.keyGroups(), "each key group once, in code point order");
    assertEquals(List.of(PAYER), payers.keyGroups(), "immutable");
    assertArrayEquals(new int[] {0, 1}, both.all());
  }

  @Test
  void thereIsAtLeastOneBucket() {
    assertThrows(IllegalArgumentException.class, () -> Routes.of(0, new ArrayList<>()));
  }
}
