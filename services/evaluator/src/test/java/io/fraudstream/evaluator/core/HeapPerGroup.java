package io.fraudstream.evaluator.core;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * Measures the heap a cached window holds, for {@link GroupWindow#heapBytes}'s estimates: the groups of 20 000 of the
 * benchmark's pairs (payerId and beneficiaryId) under one SUM rule of 30 days, fed the default profile's six-field
 * transactions, the heap after full GC at one event a group and again at eleven. Prints the bytes a group with one
 * event holds and the bytes each further event adds, each beside its estimate. Given a file of rule specs (a
 * FraudRule's {@code spec} as JSON, one a line), it measures under those rules instead: every group of every key
 * group the transactions' fields make. Not a test: run it by hand, in a JVM with room (e.g. {@code java -Xms4g -Xmx4g
 * -cp <test classes>:<classes>:<jackson-core jar> io.fraudstream.evaluator.core.HeapPerGroup [specs.jsonl]}; the
 * benchmark's 50 rules: {@code python -c 'import json; from bench.rules import rule_manifests;
 * [print(json.dumps(m["spec"])) for m in rule_manifests(50)]'}).
 */
public final class HeapPerGroup {
  private static final long T0 = 1_700_000_000_000L;
  private static final int GROUPS = 20_000;
  private static final int FURTHER_EVENTS = 10;

  private HeapPerGroup() {}

  private static long heapAfterGc() {
    for (int i = 0; i < 4; i++) {
      System.gc();
    }
    Runtime runtime = Runtime.getRuntime();
    return runtime.totalMemory() - runtime.freeMemory();
  }

  private static byte[] transaction(long seq, int pair, long eventTimeMs) {
    String json =
        "{\"transactionId\": \"tx-" + seq + "\", \"eventTime\": " + eventTimeMs + ", \"payerId\": \"payer-" + pair
            + "\", \"beneficiaryId\": \"beneficiary-" + (pair * 7 % 100_000) + "\", \"paymentAmount\": \""
            + (seq % 5_000) + "." + (seq % 100) + "\", \"paymentType\": \"" + (seq % 2 == 0 ? "CSH" : "CRD") + "\"}";
    return json.getBytes(StandardCharsets.UTF_8);
  }

  public static void main(String[] args) throws RejectedRuleMessageException, IOException {
    Engine engine = new Engine(60_000, 300_000);
    List<String> specs =
        args.length > 0
            ? Files.readAllLines(Path.of(args[0])).stream().filter(line -> !line.isBlank()).toList()
            : List.of(
                "{\"groupingKeyNames\": [\"payerId\", \"beneficiaryId\"], \"aggregatorFunctionType\": \"SUM\", "
                    + "\"aggregateFieldName\": \"paymentAmount\", \"limitOperatorType\": \"GREATER\", "
                    + "\"limit\": 1000000000, \"windowMinutes\": 43200}");
    for (int i = 0; i < specs.size(); i++) {
      String ruleId = "ns/rule-" + i;
      String rule =
          "{\"ruleId\": \"" + ruleId + "\", \"generation\": 1, \"uid\": \"uid-" + i + "\", \"spec\": "
              + specs.get(i) + "}";
      engine.onRule(ruleId, rule.getBytes(StandardCharsets.UTF_8), T0);
    }
    InMemoryGroupStore store = new InMemoryGroupStore();
    long empty = heapAfterGc();
    long oneEvent = 0;
    long estimatedOneEvent = 0;
    long seq = 0;
    long eventTimeMs = T0;
    for (int round = 0; round <= FURTHER_EVENTS; round++) {
      for (int pair = 0; pair < GROUPS; pair++) {
        engine.onRecord(transaction(seq, pair, eventTimeMs), eventTimeMs, 0, seq++, store, eventTimeMs + 5, k -> true);
        eventTimeMs++;
      }
      if (round == 0) {
        oneEvent = heapAfterGc();
        estimatedOneEvent = store.heapBytes();
      }
    }
    long full = heapAfterGc();
    long estimatedFull = store.heapBytes();
    double groups = store.size();
    System.out.printf(
        "%d rules, %d groups: %.0f B a group with one event, %.1f B each further event (estimated: %.0f B, %.1f B)%n",
        specs.size(),
        store.size(),
        (oneEvent - empty) / groups,
        (full - oneEvent) / groups / FURTHER_EVENTS,
        estimatedOneEvent / groups,
        (estimatedFull - estimatedOneEvent) / groups / FURTHER_EVENTS);
  }
}
