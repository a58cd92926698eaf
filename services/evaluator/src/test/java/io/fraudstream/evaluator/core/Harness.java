package io.fraudstream.evaluator.core;

import io.fraudstream.evaluator.spark.BucketCalls;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.io.Writer;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Predicate;

/**
 * Test harness: runs scenarios through the {@link Engine} for the Python property tests.
 *
 * <p>Reads one JSON request per stdin line and writes one JSON response line per request (flushed): request {@code
 * {"latenessMs", "futureSkewMs", "records": [{"kind":"rule","ruleId","value": text|null,"ts"} | {"kind":"tx",
 * "value": text, or "valueBase64": base64 of raw bytes, "ts","partition","offset"}], "bucket": n|null, "buckets":
 * n|null, "persistEveryRecord": bool, "routed": bool}}; response {@code {"outcomes": [per tx: {"alerts": [alert JSON], "late":
 * [[groupKey, detail]], "skipped": [[ruleId, reason]], "applied": [ruleId], "outOfOrder": bool, "rejection": null |
 * {"error", "detail"}}], "ruleRejections": [reason per rule record, null if applied], "error": null}}, or {@code
 * {"outcomes": null, "error": stack trace}} on an unexpected exception. With persistEveryRecord the engine is rebuilt
 * through toBytes/fromBytes and every group through its {@link EventCodec} rows after every record. With routed, a
 * transaction that {@link Routes} (given the engine's key groups) does not send to the bucket has an empty outcome, as
 * if the bucket never received it. With {@code "calls": {"ends": [record index], "moves": [record index], "cacheBytes"}} the records are evaluated in calls of the detector's state shell ({@link BucketCalls}), each ending
 * after a record in ends (and the last record), and each beginning at a record in moves in another JVM. Alerts have
 * detectedAt 0. Other requests: {@code codecRoundTrip}, {@code reorder}, {@code parseSpec} (see their methods).
 */
public final class Harness {
  private Harness() {}

  public static void main(String[] args) throws Exception {
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    Writer out = new OutputStreamWriter(System.out, StandardCharsets.UTF_8);
    for (String line = in.readLine(); line != null; line = in.readLine()) {
      if (line.isBlank()) {
        continue;
      }
      String response;
      try {
        response = handle((Map<?, ?>) Json.parse(line));
      } catch (Exception | StackOverflowError exc) {
        StringWriter trace = new StringWriter();
        exc.printStackTrace(new PrintWriter(trace));
        Map<String, Object> error = new LinkedHashMap<>();
        error.put("outcomes", null);
        error.put("error", trace.toString());
        response = Json.write(error);
      }
      out.write(response);
      out.write('\n');
      out.flush();
    }
  }

  static String handle(Map<?, ?> request) {
    if (request.containsKey("codecRoundTrip")) {
      return codecRoundTrip((List<?>) request.get("codecRoundTrip"));
    }
    if (request.containsKey("reorder")) {
      return reorder((Map<?, ?>) request.get("reorder"));
    }
    if (request.containsKey("parseSpec")) {
      return parseSpec((String) request.get("parseSpec"));
    }
    long latenessMs = ((BigInteger) request.get("latenessMs")).longValueExact();
    long futureSkewMs =
        request.get("futureSkewMs") == null
            ? Engine.DEFAULT_FUTURE_SKEW_MS
            : ((BigInteger) request.get("futureSkewMs")).longValueExact();
    boolean persist = Boolean.TRUE.equals(request.get("persistEveryRecord"));
    Predicate<String> owns = key -> true;
    int buckets = 1;
    int bucket = 0;
    if (request.get("buckets") != null) {
      buckets = ((BigInteger) request.get("buckets")).intValueExact();
      bucket = ((BigInteger) request.get("bucket")).intValueExact();
      int owner = bucket;
      int among = buckets;
      owns = key -> GroupKeys.bucketOf(key, among) == owner;
    }
    boolean routed = Boolean.TRUE.equals(request.get("routed"));
    Map<?, ?> plan = (Map<?, ?>) request.get("calls");
    BucketCalls calls =
        plan == null
            ? null
            : new BucketCalls(latenessMs, futureSkewMs, ((BigInteger) plan.get("cacheBytes")).longValueExact());
    Object pageOut = request.get("pageOut");
    if (plan != null && (persist || pageOut != null)) {
      throw new IllegalArgumentException(
          "calls keep the groups in the detector's own shell: no persistEveryRecord or pageOut with them");
    }
    Set<?> callEnds = plan == null ? Set.of() : new HashSet<>((List<?>) plan.get("ends"));
    Set<?> moves = plan == null ? Set.of() : new HashSet<>((List<?>) plan.get("moves"));
    Engine engine = new Engine(latenessMs, futureSkewMs);
    GroupStore store =
        pageOut == null
            ? persist ? new RowGroupStore() : new InMemoryGroupStore()
            : "resumed".equals(pageOut) ? new ResumedGroupStore() : new PagedGroupStore("everything".equals(pageOut));
    StringBuilder out = new StringBuilder("{\"outcomes\":[");
    List<String> ruleRejections = new ArrayList<>();
    boolean first = true;
    List<?> records = (List<?>) request.get("records");
    boolean inCall = false;
    for (int index = 0; index < records.size(); index++) {
      Map<?, ?> record = (Map<?, ?>) records.get(index);
      long ts = ((BigInteger) record.get("ts")).longValueExact();
      byte[] bytes = valueOf(record);
      BigInteger position = BigInteger.valueOf(index);
      if (calls != null && !inCall) {
        calls.begin(ts, moves.contains(position));
        engine = calls.engine();
        store = calls.groups();
        inCall = true;
      }
      if ("rule".equals(record.get("kind"))) {
        try {
          engine.onRule((String) record.get("ruleId"), bytes, ts);
          if (calls != null) {
            calls.ruleApplied();
          }
          ruleRejections.add(null);
        } catch (RejectedRuleMessageException exc) {
          ruleRejections.add(exc.reason().label());
        }
      } else {
        int partition = ((BigInteger) record.get("partition")).intValueExact();
        long offset = ((BigInteger) record.get("offset")).longValueExact();
        Outcome outcome =
            !routed || reaches(Routes.of(buckets, engine.knownKeyGroups()).of(bytes, partition, offset), bucket)
                ? engine.onRecord(bytes, ts, partition, offset, store, 0, owns)
                : new Outcome(List.of(), List.of(), List.of(), List.of(), false, null);
        if (!first) {
          out.append(',');
        }
        first = false;
        writeOutcome(outcome, out);
      }
      if (persist) {
        engine = Engine.fromBytes(engine.toBytes());
      }
      if (calls != null && (callEnds.contains(position) || index == records.size() - 1)) {
        calls.end();
        inCall = false;
      }
    }
    out.append("],\"ruleRejections\":");
    Json.write(ruleRejections, out, false);
    return out.append(",\"error\":null}").toString();
  }

  private static byte[] valueOf(Map<?, ?> record) {
    if (record.get("valueBase64") instanceof String encoded) {
      return Base64.getDecoder().decode(encoded);
    }
    String value = (String) record.get("value");
    return value == null ? null : value.getBytes(StandardCharsets.UTF_8);
  }

  /**
   * Round-trips a stored event holding {@code values} plus MISSING, and the head of a window holding it, through
   * {@link EventCodec}; answers {@code {"roundTrip": bool, "values": decoded values (MISSING as the string
   * "<MISSING>"), "error": null}}.
   */
  private static String codecRoundTrip(List<?> values) {
    List<Object> withMissing = new ArrayList<>(values);
    withMissing.add(Missing.MISSING);
    StoredEvent event =
        new StoredEvent(7, 1_700_000_000_000L, -3, 2, Long.MAX_VALUE, 9, Collections.unmodifiableList(withMissing));
    StoredEvent decoded = EventCodec.decode(EventCodec.encode(event));
    List<String> names = new ArrayList<>();
    for (int i = 0; i < withMissing.size(); i++) {
      names.add("f\u00e9" + i);
    }
    GroupWindow.BucketsOf buckets = new GroupWindow.BucketsOf(3, 60_000L);
    Bucket bucket = new Bucket(new java.math.BigDecimal("-1.50"), 2, new java.math.BigDecimal("-2"), java.math.BigDecimal.ONE);
    GroupWindow window =
        GroupWindow.restore(
            names,
            List.of(event),
            1_700_000_000_000L,
            null,
            8,
            1_700_000_000_005L,
            Map.of(buckets, new TreeMap<>(Map.of(-5L, bucket, 28_333_333L, bucket))));
    EventCodec.Head head = EventCodec.decodeHead(EventCodec.encodeHead(window));
    List<GroupWindow.BucketSpan> spans = List.of(new GroupWindow.BucketSpan(60_000L, -5L, 28_333_333L));
    java.util.SortedMap<Long, Bucket> slot = new java.util.TreeMap<>(Map.of(3L, bucket));
    boolean same =
        decoded.equals(event)
            && head.equals(
                new EventCodec.Head(names, 1_700_000_000_000L, null, 8, 7, 1_700_000_000_005L, spans, List.of()))
            && EventCodec.decodeSlot(EventCodec.encodeSlot(slot)).equals(slot);
    List<Object> rendered = new ArrayList<>(decoded.values());
    rendered.set(rendered.size() - 1, "<MISSING>");
    Map<String, Object> response = new LinkedHashMap<>();
    response.put("roundTrip", same);
    response.put("values", rendered);
    response.put("error", null);
    return Json.write(response);
  }

  /**
   * Parses a FraudRule spec given as JSON text with {@link RuleSpec#parse}; answers {@code {"spec": normalized spec
   * JSON or null, "invalid": null or the InvalidRuleException's message, "error": null}}.
   */
  private static String parseSpec(String text) {
    Map<String, Object> response = new LinkedHashMap<>();
    try {
      response.put("spec", RuleSpec.parse(Json.parse(text.getBytes(StandardCharsets.UTF_8))).toJson());
      response.put("invalid", null);
    } catch (InvalidRuleException | JsonValueException exc) {
      response.put("spec", null);
      response.put("invalid", exc.getMessage());
    }
    response.put("error", null);
    return Json.write(response);
  }

  /**
   * Runs arrivals through a {@link ReorderBuffer}: request {@code {"waitMs", "arrivals": [[arrivalMs, tsMs,
   * partition, offset]...]}} (arrival times non-decreasing), each added at its arrival time and followed by a release
   * at that time; at the end everything is released. Answers {@code {"released": [[tsMs, partition, offset,
   * releasedAtMs]...], "error": null}}, the end's release at Long.MAX_VALUE.
   */
  private static String reorder(Map<?, ?> request) {
    long waitMs = ((BigInteger) request.get("waitMs")).longValueExact();
    ReorderBuffer<long[]> buffer =
        new ReorderBuffer<>(
            waitMs,
            (a, b) -> {
              int c = Long.compare(a[0], b[0]);
              c = c != 0 ? c : Long.compare(a[1], b[1]);
              return c != 0 ? c : Long.compare(a[2], b[2]);
            });
    List<Object> released = new ArrayList<>();
    for (Object raw : (List<?>) request.get("arrivals")) {
      List<?> arrival = (List<?>) raw;
      long atMs = ((BigInteger) arrival.get(0)).longValueExact();
      long[] item = new long[3];
      for (int i = 0; i < 3; i++) {
        item[i] = ((BigInteger) arrival.get(i + 1)).longValueExact();
      }
      buffer.add(item, atMs);
      for (long[] out : buffer.release(atMs)) {
        released.add(List.of(out[0], out[1], out[2], atMs));
      }
    }
    for (long[] out : buffer.release(Long.MAX_VALUE)) {
      released.add(List.of(out[0], out[1], out[2], Long.MAX_VALUE));
    }
    Map<String, Object> response = new LinkedHashMap<>();
    response.put("released", released);
    response.put("error", null);
    return Json.write(response);
  }

  private static boolean reaches(int[] routes, int bucket) {
    for (int route : routes) {
      if (route == bucket) {
        return true;
      }
    }
    return false;
  }

  private static void writeOutcome(Outcome outcome, StringBuilder out) {
    out.append("{\"alerts\":[");
    for (int i = 0; i < outcome.alerts().size(); i++) {
      if (i > 0) {
        out.append(',');
      }
      out.append(outcome.alerts().get(i).toJsonText());
    }
    List<Object> late = new ArrayList<>();
    for (Outcome.LateGroup group : outcome.late()) {
      late.add(List.of(group.groupKey(), group.detail()));
    }
    List<Object> skipped = new ArrayList<>();
    for (Outcome.SkippedRule skip : outcome.skipped()) {
      skipped.add(List.of(skip.ruleId(), skip.reason().label()));
    }
    Map<String, Object> rest = new LinkedHashMap<>();
    rest.put("late", late);
    rest.put("skipped", skipped);
    rest.put("applied", outcome.applied());
    rest.put("outOfOrder", outcome.outOfOrder());
    Map<String, Object> rejection = null;
    if (outcome.rejection() != null) {
      rejection = new LinkedHashMap<>();
      rejection.put("error", outcome.rejection().error().label());
      rejection.put("detail", outcome.rejection().detail());
    }
    rest.put("rejection", rejection);
    String restJson = Json.write(rest);
    out.append("],").append(restJson, 1, restJson.length());
  }

  /**
   * Throws unless group {@code groupKey}, whose window as written is {@code window}, has a row among {@code
   * eventRows} for each of its live events (and perhaps its snapshot) and one among {@code bucketRows} for each of
   * its bucket slots, and no other: a row of an evicted event or of an empty slot is a leak.
   */
  public static void checkRows(
      String groupKey, GroupWindow window, Collection<String> eventRows, Collection<String> bucketRows) {
    String snapshot = GroupRows.snapshotKey(groupKey);
    long events =
        eventRows.stream().filter(key -> GroupRows.belongsTo(key, groupKey) && !key.equals(snapshot)).count();
    long buckets = bucketRows.stream().filter(key -> GroupRows.belongsTo(key, groupKey)).count();
    int slots = window.bucketSlots().size();
    if (events != window.size() || buckets != slots) {
      throw new IllegalStateException(
          "group " + groupKey + " has " + events + " event rows for " + window.size() + " live events and "
              + buckets + " bucket rows for " + slots + " bucket slots");
    }
  }

  /**
   * Keeps each group only as rows ({@link GroupRows}, as the Spark shell does), checking after every write that no
   * row of an evicted event or an empty bucket slot is left; every get rebuilds the window from the rows.
   */
  static final class RowGroupStore implements GroupStore {
    private final TreeMap<String, byte[]> heads = new TreeMap<>();
    private final TreeMap<String, byte[]> events = new TreeMap<>();
    private final TreeMap<String, byte[]> buckets = new TreeMap<>();
    private final GroupRows rows;

    RowGroupStore() {
      rows = new GroupRows(table(heads), table(events), table(buckets));
    }

    /** Rows that keep the snapshot of every window of at least one event ({@link GroupRows#saveSnapshot}). */
    RowGroupStore(int snapshotMinEvents) {
      rows = new GroupRows(table(heads), table(events), table(buckets), snapshotMinEvents);
    }

    @Override
    public GroupWindow get(String groupKey) {
      return rows.load(groupKey);
    }

    @Override
    public void put(String groupKey, GroupWindow window) {
      rows.write(groupKey, window);
      checkRows(groupKey, window, events.keySet(), buckets.keySet());
    }

    @Override
    public void delete(String groupKey) {
      rows.delete(groupKey);
      if (events.keySet().stream().anyMatch(key -> GroupRows.belongsTo(key, groupKey))
          || buckets.keySet().stream().anyMatch(key -> GroupRows.belongsTo(key, groupKey))) {
        throw new IllegalStateException("rows of deleted group " + groupKey + " are left");
      }
    }

    private static GroupRows.Table table(Map<String, byte[]> map) {
      return GroupRows.Table.of(map::get, map::put, map::remove);
    }
  }

  /**
   * Keeps each group only as rows and a snapshot ({@link GroupRows#saveSnapshot}), as the Spark shell does for a
   * window its cache dropped: every get of a group with events resumes its window from the snapshot, without its
   * events, and reads back through the pager what the record needs; throws if a get finds no usable snapshot.
   */
  static final class ResumedGroupStore implements GroupStore {
    private final RowGroupStore rows = new RowGroupStore(1);

    @Override
    public GroupWindow get(String groupKey) {
      GroupWindow window = rows.get(groupKey);
      if (window != null && window.size() > 0 && !window.resumed()) {
        throw new IllegalStateException("group " + groupKey + " was read back from its events, not its snapshot");
      }
      return window;
    }

    @Override
    public void put(String groupKey, GroupWindow window) {
      rows.put(groupKey, window);
      rows.rows.saveSnapshot(groupKey, window);
    }

    @Override
    public void delete(String groupKey) {
      rows.delete(groupKey);
    }
  }

  /**
   * Keeps each group's window in memory, as the Spark shell's cache does, writing it as rows after every change and
   * then paging out its events ({@link GroupWindow#pageOut}): all of them with {@code everything}, else those the
   * shell would; every event a later step needs is read back from the rows.
   */
  static final class PagedGroupStore implements GroupStore {
    private final RowGroupStore rows = new RowGroupStore();
    private final Map<String, GroupWindow> windows = new HashMap<>();
    private final boolean everything;

    PagedGroupStore(boolean everything) {
      this.everything = everything;
    }

    @Override
    public GroupWindow get(String groupKey) {
      return windows.get(groupKey);
    }

    @Override
    public void put(String groupKey, GroupWindow window) {
      window.attachPager(rows.rows.pager(groupKey));
      rows.put(groupKey, window);
      window.pageOut(everything);
      windows.put(groupKey, window);
    }

    @Override
    public void delete(String groupKey) {
      rows.delete(groupKey);
      windows.remove(groupKey);
    }
  }
}
