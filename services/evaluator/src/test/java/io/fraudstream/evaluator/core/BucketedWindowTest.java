package io.fraudstream.evaluator.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * BucketedWindow through the GroupWindow that owns it, against a brute force over the members inserted: the window at
 * t folds buckets {@code floorDiv(t - w, p)} .. {@code floorDiv(t, p)} and keeps buckets back to the one holding
 * {@code M - (w + lateness)}; buckets survive a change of projection and a round trip through {@link GroupRows}, and
 * the rows follow every write and drop: one row per bucket slot (precision and index), shared by the rules.
 */
class BucketedWindowTest {
  private static final long WINDOW_MS = 60_000;
  private static final long PRECISION_MS = 10_000;
  private static final long LATENESS_MS = 5_000;
  private static final List<String> FIELDS = List.of("amount");
  private static final WindowSpec.Key KEY = new WindowSpec.Key("uid", 4, 0, null, PRECISION_MS);

  private record Member(long timeMs, BigDecimal value) {}

  private static WindowSpec spec(WindowSpec.Kind kind, List<String> fields) {
    return spec(KEY, kind, WINDOW_MS, fields);
  }

  private static WindowSpec spec(WindowSpec.Key key, WindowSpec.Kind kind, long windowMs, List<String> fields) {
    int position = fields.indexOf("amount");
    return new WindowSpec(key, kind, windowMs, LATENESS_MS, event -> event.amount(position));
  }

  private static void insert(GroupWindow window, long timeMs, BigDecimal value, long seq) {
    List<Object> values = new ArrayList<>();
    for (String field : window.fieldNames()) {
      values.add(field.equals("amount") ? value : Missing.MISSING);
    }
    window.insert(timeMs, seq, 0, seq, 1, values.toArray());
  }

  /** The brute force: every member inserted whose bucket is in the query's range and not behind the retention. */
  private static WindowAggregate expected(List<Member> members, WindowSpec.Kind kind, long timeMs, long firstKept) {
    long low = Math.max(Math.floorDiv(timeMs - WINDOW_MS, PRECISION_MS), firstKept);
    long high = Math.floorDiv(timeMs, PRECISION_MS);
    BigDecimal total = BigDecimal.ZERO;
    long count = 0;
    BigDecimal extreme = null;
    for (Member member : members) {
      long index = Math.floorDiv(member.timeMs(), PRECISION_MS);
      if (member.value() == null || index < low || index > high) {
        continue;
      }
      total = total.add(member.value());
      count++;
      int order = extreme == null ? 0 : member.value().compareTo(extreme);
      if (extreme == null || (kind == WindowSpec.Kind.MIN ? order < 0 : order > 0)) {
        extreme = member.value();
      }
    }
    if (count == 0) {
      return WindowAggregate.EMPTY;
    }
    return new WindowAggregate(total, count, kind == WindowSpec.Kind.SUM_COUNT ? null : extreme);
  }

  /** The three tables of {@link GroupRows} as memory maps, for tests to inspect. */
  private record MemoryTables(Map<String, byte[]> heads, Map<String, byte[]> events, Map<String, byte[]> buckets) {
    MemoryTables() {
      this(new TreeMap<>(), new TreeMap<>(), new TreeMap<>());
    }

    GroupRows rows() {
      return rows(new ArrayList<>());
    }

    /** As {@link #rows()}, recording the key of every bucket row put or removed in {@code bucketWrites}. */
    GroupRows rows(List<String> bucketWrites) {
      return new GroupRows(
          GroupRows.Table.of(heads::get, heads::put, heads::remove),
          GroupRows.Table.of(events::get, events::put, events::remove),
          GroupRows.Table.of(
              buckets::get,
              (key, value) -> {
                bucketWrites.add(key);
                buckets.put(key, value);
              },
              key -> {
                bucketWrites.add(key);
                buckets.remove(key);
              }));
    }
  }

  private static final WindowSpec.Key HOURLY = new WindowSpec.Key("hourly", 7, 0, null, PRECISION_MS);
  private static final WindowSpec.Key COARSE = new WindowSpec.Key("coarse", 9, 0, null, 3 * PRECISION_MS);

  /** Three bucketed rules: two of one precision (different windows and aggregates), one of another. */
  private static Map<String, WindowSpec> threeRules(List<String> fields) {
    return Map.of(
        "a", spec(KEY, WindowSpec.Kind.SUM_COUNT, WINDOW_MS, fields),
        "b", spec(HOURLY, WindowSpec.Kind.MAX, 2 * WINDOW_MS, fields),
        "c", spec(COARSE, WindowSpec.Kind.MIN, 3 * WINDOW_MS, fields));
  }

  private static Map<String, WindowAggregate> aggregates(GroupWindow window, long timeMs) {
    return Map.of(
        "a", window.aggregate("a", timeMs), "b", window.aggregate("b", timeMs), "c", window.aggregate("c", timeMs));
  }

  @Test
  void rulesOfOnePrecisionShareOneRowPerBucketIndex() {
    MemoryTables tables = new MemoryTables();
    List<String> bucketWrites = new ArrayList<>();
    GroupRows rows = tables.rows(bucketWrites);
    GroupWindow window = new GroupWindow(FIELDS);
    window.prepare(FIELDS, threeRules(FIELDS));
    Random random = new Random(11);
    long clock = 1_000_000;
    for (int step = 0; step < 400; step++) {
      clock += random.nextInt(3_000);
      insert(window, clock, BigDecimal.valueOf(random.nextInt(1_000), 1), step);
      window.setFloor(window.maxEventTimeMs() - LATENESS_MS);
      bucketWrites.clear();
      rows.write("g", window);
      // The new event's slot of each precision (one row for two rules), and at most one slot a rule left behind.
      assertTrue(bucketWrites.size() <= 2 + 3, "step " + step + ": " + bucketWrites);
      assertEquals(bucketWrites.size(), new java.util.HashSet<>(bucketWrites).size(), "each row once");
      assertEquals(window.bucketSlots().size(), tables.buckets().size(), "one row per slot, none left behind");
      if (step % 40 == 0) {
        Map<String, WindowAggregate> before = aggregates(window, clock);
        window = rows.load("g");
        window.prepare(FIELDS, threeRules(FIELDS));
        assertEquals(before, aggregates(window, clock), "step " + step);
      }
    }
    // Each precision's rows hold both or one of its rules' buckets: the hourly rule keeps twice the window.
    assertTrue(window.bucketSlots().size() < window.bucketCount());

    window.prepare(FIELDS, Map.of("b", threeRules(FIELDS).get("b"))); // a and c leave the plan
    rows.write("g", window);
    assertEquals(window.bucketCount(), tables.buckets().size(), "a's share of the shared rows is gone, c's rows too");
    for (byte[] slot : tables.buckets().values()) {
      assertEquals(List.of(HOURLY.windowStartSeq()), List.copyOf(EventCodec.decodeSlot(slot).keySet()), "b's only");
    }
    GroupWindow reloaded = rows.load("g");
    reloaded.prepare(FIELDS, Map.of("b", threeRules(FIELDS).get("b")));
    assertEquals(window.aggregate("b", clock), reloaded.aggregate("b", clock));
    rows.delete("g");
    assertTrue(tables.heads().isEmpty() && tables.events().isEmpty() && tables.buckets().isEmpty());
  }

  /** A zigzag varint, as EventCodec writes them. */
  private static void varlong(java.io.ByteArrayOutputStream out, long value) {
    long zigzag = (value << 1) ^ (value >> 63);
    while ((zigzag & ~0x7FL) != 0) {
      out.write((int) ((zigzag & 0x7F) | 0x80));
      zigzag >>>= 7;
    }
    out.write((int) zigzag);
  }

  @Test
  void aGroupWrittenWithOneRowPerRuleWindowAndBucketIsReadAndRewrittenAsSlots() {
    // What the previous layout (head format 3) held for three rules, written out by hand.
    MemoryTables tables = new MemoryTables();
    GroupRows rows = tables.rows();
    GroupWindow current = new GroupWindow(FIELDS);
    current.prepare(FIELDS, threeRules(FIELDS));
    for (long t = 0; t < 100_000; t += 7_000) {
      insert(current, t, BigDecimal.valueOf(t % 13), t);
    }
    current.setFloor(current.maxEventTimeMs() - LATENESS_MS);
    java.io.ByteArrayOutputStream head = new java.io.ByteArrayOutputStream();
    varlong(head, 3);
    varlong(head, 1);
    head.write(4); // UTF-8
    varlong(head, "amount".length());
    head.writeBytes("amount".getBytes(java.nio.charset.StandardCharsets.UTF_8));
    head.write(1);
    varlong(head, current.maxEventTimeMs());
    head.write(1);
    varlong(head, current.floorMs());
    varlong(head, current.nextEventId());
    varlong(head, current.minLiveId());
    head.write(0); // no maxIngestTsMs
    List<Map.Entry<WindowSpec.Key, WindowSpec>> bucketed =
        threeRules(FIELDS).values().stream().map(spec -> Map.entry(spec.key, spec)).toList();
    varlong(head, bucketed.size());
    for (Map.Entry<WindowSpec.Key, WindowSpec> entry : bucketed) {
      WindowSpec.Key key = entry.getKey();
      GroupWindow.BucketsOf of = GroupWindow.BucketsOf.of(key);
      java.util.NavigableMap<Long, Bucket> held = new TreeMap<>();
      for (GroupWindow.BucketSpan span : current.bucketSpans()) {
        for (long i = span.first(); i <= span.last(); i++) {
          GroupWindow.BucketSlot slot = new GroupWindow.BucketSlot(span.precisionMs(), i);
          Bucket bucket = current.bucketsAt(slot).get(key.windowStartSeq());
          if (span.precisionMs() == key.precisionMs() && bucket != null) {
            held.put(i, bucket);
          }
        }
      }
      head.write(4);
      varlong(head, key.uid().length());
      head.writeBytes(key.uid().getBytes(java.nio.charset.StandardCharsets.UTF_8));
      varlong(head, key.windowStartSeq());
      varlong(head, key.windowStartTsMs());
      varlong(head, key.precisionMs());
      varlong(head, held.firstKey());
      varlong(head, held.lastKey());
      held.forEach(
          (i, bucket) -> tables.buckets().put(GroupRows.windowBucketKey("g", of, i), EventCodec.encodeBucket(bucket)));
    }
    tables.heads().put("g", head.toByteArray());
    Map<String, byte[]> formatThree = new TreeMap<>(tables.buckets());
    rows.delete("g"); // as the sweep deletes a group it never loaded
    assertTrue(tables.heads().isEmpty() && tables.buckets().isEmpty());
    tables.heads().put("g", head.toByteArray());
    tables.buckets().putAll(formatThree);

    GroupWindow migrated = rows.load("g");
    assertEquals(List.of(), EventCodec.decodeHead(tables.heads().get("g")).windowBuckets(), "written as format 4");
    assertEquals(current.bucketSlots().size(), tables.buckets().size(), "only slot rows are left");
    GroupWindow reloaded = rows.load("g");
    for (GroupWindow window : List.of(migrated, reloaded)) {
      window.prepare(FIELDS, threeRules(FIELDS));
      assertEquals(aggregates(current, current.maxEventTimeMs()), aggregates(window, current.maxEventTimeMs()));
      assertEquals(current.bucketCount(), window.bucketCount());
    }
    rows.delete("g");
    assertTrue(tables.heads().isEmpty() && tables.buckets().isEmpty());
  }

  @ParameterizedTest
  @EnumSource(WindowSpec.Kind.class)
  void aggregatesMatchABruteForceUnderDisorderRetentionAndReloads(WindowSpec.Kind kind) {
    Random random = new Random(kind.ordinal() * 31L + 7);
    MemoryTables tables = new MemoryTables();
    GroupRows rows = tables.rows();
    GroupWindow window = new GroupWindow(FIELDS);
    window.prepare(FIELDS, Map.of("rule", spec(kind, FIELDS)));
    List<Member> members = new ArrayList<>();
    long clock = 1_000_000;
    long firstKept = Long.MIN_VALUE;
    for (int step = 0; step < 600; step++) {
      clock += random.nextInt(4_000);
      long timeMs = random.nextInt(5) == 0 ? clock - random.nextInt(70_000) : clock; // some far behind
      Long newest = window.maxEventTimeMs();
      if (newest != null && timeMs < newest - (WINDOW_MS + LATENESS_MS)) {
        continue; // late for the group: the engine never inserts it
      }
      BigDecimal value = random.nextInt(6) == 0 ? null : BigDecimal.valueOf(random.nextInt(2_000) - 1_000, 2);
      insert(window, timeMs, value, step);
      members.add(new Member(timeMs, value));
      assertEquals(expected(members, kind, timeMs, firstKept), window.aggregate("rule", timeMs), "step " + step);
      window.setFloor(window.maxEventTimeMs() - LATENESS_MS);
      firstKept = Math.floorDiv(window.maxEventTimeMs() - WINDOW_MS - LATENESS_MS, PRECISION_MS);
      rows.write("g", window);
      assertEquals(window.bucketCount(), tables.buckets().size(), "one row per bucket, none left behind");
      if (step % 50 == 0) {
        window = rows.load("g");
        List<String> wider = step % 100 == 0 ? List.of("amount", "other") : FIELDS;
        window.prepare(wider, Map.of("rule", spec(kind, wider)));
      }
    }
    assertTrue(window.bucketCount() <= (WINDOW_MS + LATENESS_MS) / PRECISION_MS + 2, "bounded by the window");
  }

  @Test
  void theQueryTakesInTheWholeOldestAndNewestBuckets() {
    GroupWindow window = new GroupWindow(FIELDS);
    window.prepare(FIELDS, Map.of("rule", spec(WindowSpec.Kind.SUM_COUNT, FIELDS)));
    insert(window, 0, BigDecimal.ONE, 0); // bucket 0: older than t - w = 1 ms, but in the bucket holding it
    insert(window, 69_999, BigDecimal.TEN, 1); // bucket 6, after t: in t's own bucket
    insert(window, 60_001, BigDecimal.ONE, 2);
    WindowAggregate at = window.aggregate("rule", 60_001);
    assertEquals(new WindowAggregate(BigDecimal.valueOf(12), 3, null), at);
  }

  @Test
  void aRuleLeavingThePlanDropsItsBucketsAndTheirRows() {
    MemoryTables tables = new MemoryTables();
    GroupRows rows = tables.rows();
    GroupWindow window = new GroupWindow(FIELDS);
    window.prepare(FIELDS, Map.of("rule", spec(WindowSpec.Kind.MAX, FIELDS)));
    for (long t = 0; t < 50_000; t += 10_000) {
      insert(window, t, BigDecimal.ONE, t);
    }
    rows.write("g", window);
    assertEquals(5, tables.buckets().size());
    GroupWindow restored = rows.load("g");
    assertEquals(5, restored.bucketCount(), "restored, waiting for prepare to take them up");
    restored.prepare(FIELDS, Map.of());
    rows.write("g", restored);
    assertEquals(0, tables.buckets().size(), "buckets of a rule no longer planned are deleted");
    assertEquals(0, restored.bucketCount());

    window.prepare(FIELDS, Map.of());
    rows.write("g", window);
    assertEquals(0, tables.buckets().size());
    rows.delete("g");
    assertTrue(tables.heads().isEmpty() && tables.events().isEmpty());
    assertNull(rows.load("g"));
  }
}
