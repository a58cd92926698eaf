package io.fraudstream.evaluator.spark;

import io.fraudstream.evaluator.core.Json;
import io.fraudstream.evaluator.core.Routes;
import io.fraudstream.evaluator.core.Rule;
import java.io.BufferedReader;
import java.lang.management.ManagementFactory;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * Micro-benchmark driver (bench/evaluator_cost.py runs it): the CPU time and the heap allocation the evaluating stage
 * spends per transaction, for a recorded workload, with nothing else in the measurement: no Kafka, no Spark task, no
 * RocksDB (Spark's TwsTester holds the state in memory).
 *
 * <p>Arguments: a file of records, one JSON object a line ({@code {"kind": "rule", "ruleId", "value", "ts"}} or
 * {@code {"kind": "tx", "value", "ts", "partition", "offset"}}), the number of buckets and the transactions per
 * round. Every record goes to every bucket in a call of its own, as Real-time Mode's calls mostly hold one record;
 * processing time follows the records' timestamps. Prints one JSON line per round of transactions: {@code {"round",
 * "transactions", "cpuNsPerTx", "allocBytesPerTx", "outputRows", "routeCpuNsPerTx", "routeAllocBytesPerTx",
 * "routedBuckets"}} (the calling thread's CPU time and allocation: TwsTester runs the processor on it). The route
 * figures are the router's ({@link Routes#of} for the rules' key groups, as the detector's first stage calls it), for
 * the round's transactions again once the round is evaluated, and measured apart; routedBuckets counts the buckets
 * they reach.
 */
public final class EvaluatorCost {
  private EvaluatorCost() {}

  public static void main(String[] args) throws Exception {
    if (args.length != 3) {
      throw new IllegalArgumentException("usage: EvaluatorCost RECORDS_FILE BUCKETS TX_PER_ROUND");
    }
    List<InputRecord> records = read(Path.of(args[0]));
    int buckets = Integer.parseInt(args[1]);
    int perRound = Integer.parseInt(args[2]);
    com.sun.management.ThreadMXBean threads =
        (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    SettableClock clock = new SettableClock(records.isEmpty() ? 0 : records.get(0).timestampMs());
    try (FakeRulesTopic rules = new FakeRulesTopic(Map.of(), 60_000)) {
      BucketProcessor.Settings settings =
          new BucketProcessor.Settings(buckets, 60_000, 300_000, 0, 600_000, 0);
      BucketProcessor processor =
          new BucketProcessor(settings, "evaluator-cost-" + UUID.randomUUID(), rules.topic, clock);
      Tester<String> tester = new Tester<>(processor, processor.timeMode());
      String[] keys = BucketKeys.keys(buckets);
      List<List<String>> keyGroups = new ArrayList<>();
      List<InputRecord> roundTransactions = new ArrayList<>();
      int round = 0;
      int inRound = 0;
      long outputs = 0;
      long cpuStart = threads.getCurrentThreadCpuTime();
      long allocStart = threads.getCurrentThreadAllocatedBytes();
      for (InputRecord record : records) {
        clock.set(Math.max(clock.millis(), record.timestampMs()));
        for (int bucket = 0; bucket < buckets; bucket++) {
          outputs += tester.test(keys[bucket], Records.row(record, bucket)).size();
        }
        if (record.isRule()) {
          Rule rule = Rule.parseMessage(record.value()); // null for a tombstone
          if (rule != null) {
            keyGroups.add(rule.spec().groupingKeyNames());
          }
          continue;
        }
        roundTransactions.add(record);
        if (++inRound == perRound) {
          long cpu = threads.getCurrentThreadCpuTime();
          long alloc = threads.getCurrentThreadAllocatedBytes();
          Routes routes = Routes.of(buckets, keyGroups); // their setup is left out: the router's cost is per record
          long routeCpuStart = threads.getCurrentThreadCpuTime();
          long routeAllocStart = threads.getCurrentThreadAllocatedBytes();
          long routed = 0;
          for (InputRecord tx : roundTransactions) {
            routed += routes.of(tx.value(), tx.partition(), tx.offset()).length;
          }
          long routeCpu = threads.getCurrentThreadCpuTime() - routeCpuStart;
          long routeAlloc = threads.getCurrentThreadAllocatedBytes() - routeAllocStart;
          Map<String, Object> line = new LinkedHashMap<>();
          line.put("round", round++);
          line.put("transactions", inRound);
          line.put("cpuNsPerTx", (cpu - cpuStart) / inRound);
          line.put("allocBytesPerTx", (alloc - allocStart) / inRound);
          line.put("outputRows", outputs);
          line.put("routeCpuNsPerTx", routeCpu / inRound);
          line.put("routeAllocBytesPerTx", routeAlloc / inRound);
          line.put("routedBuckets", routed);
          System.out.println(Json.write(line));
          System.out.flush();
          inRound = 0;
          outputs = 0;
          roundTransactions.clear();
          cpuStart = threads.getCurrentThreadCpuTime();
          allocStart = threads.getCurrentThreadAllocatedBytes();
        }
      }
    }
  }

  private static List<InputRecord> read(Path file) throws Exception {
    List<InputRecord> records = new ArrayList<>();
    try (BufferedReader in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
      for (String line = in.readLine(); line != null; line = in.readLine()) {
        Map<?, ?> item = (Map<?, ?>) Json.parse(line);
        long ts = ((BigInteger) item.get("ts")).longValueExact();
        String value = (String) item.get("value");
        if ("rule".equals(item.get("kind"))) {
          records.add(Records.rule(0, records.size(), ts, (String) item.get("ruleId"), value));
        } else {
          int partition = ((BigInteger) item.get("partition")).intValueExact();
          long offset = ((BigInteger) item.get("offset")).longValueExact();
          records.add(Records.tx(partition, offset, ts, value));
        }
      }
    }
    return records;
  }
}
