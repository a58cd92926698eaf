package io.fraudstream.evaluator.core;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.io.Writer;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Predicate;

/**
 * Test harness: runs scenarios through the {@link Engine} for the Python property tests.
 *
 * <p>Reads one JSON request per stdin line and writes one JSON response line per request (flushed): request {@code
 * {"latenessMs", "records": [{"kind":"rule","ruleId","value": text|null,"ts"} | {"kind":"tx","value": text,"ts",
 * "partition","offset"}], "bucket": n|null, "buckets": n|null, "persistEveryRecord": bool}}; response {@code
 * {"outcomes": [per tx: {"alerts": [alert JSON], "lateGroups", "invalidReason"}], "error": null}}, or {@code
 * {"outcomes": null, "error": stack trace}} on an unexpected exception. A transaction that does not parse yields its
 * parse reason as invalidReason. With persistEveryRecord the engine is rebuilt through toBytes/fromBytes and every
 * group through its {@link EventCodec} rows after every record. Alerts have detectedAt 0.
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

  static String handle(Map<?, ?> request) throws InvalidRuleException {
    if (request.containsKey("codecRoundTrip")) {
      return codecRoundTrip((List<?>) request.get("codecRoundTrip"));
    }
    long latenessMs = ((BigInteger) request.get("latenessMs")).longValueExact();
    boolean persist = Boolean.TRUE.equals(request.get("persistEveryRecord"));
    Predicate<String> owns = key -> true;
    if (request.get("buckets") != null) {
      int buckets = ((BigInteger) request.get("buckets")).intValueExact();
      int bucket = ((BigInteger) request.get("bucket")).intValueExact();
      owns = key -> GroupKeys.bucketOf(key, buckets) == bucket;
    }
    Engine engine = new Engine(latenessMs);
    GroupStore store = persist ? new RowGroupStore() : new InMemoryGroupStore();
    StringBuilder out = new StringBuilder("{\"outcomes\":[");
    boolean first = true;
    for (Object raw : (List<?>) request.get("records")) {
      Map<?, ?> record = (Map<?, ?>) raw;
      long ts = ((BigInteger) record.get("ts")).longValueExact();
      String value = (String) record.get("value");
      if ("rule".equals(record.get("kind"))) {
        byte[] bytes = value == null ? null : value.getBytes(StandardCharsets.UTF_8);
        engine.onRule((String) record.get("ruleId"), bytes, ts);
      } else {
        int partition = ((BigInteger) record.get("partition")).intValueExact();
        long offset = ((BigInteger) record.get("offset")).longValueExact();
        Outcome outcome;
        try {
          Transaction tx = Transaction.parse(value.getBytes(StandardCharsets.UTF_8), ts, partition, offset);
          outcome = engine.onTransaction(tx, store, 0, owns);
        } catch (InvalidTransactionException exc) {
          outcome = new Outcome(List.of(), List.of(), exc.getReason());
        }
        if (!first) {
          out.append(',');
        }
        first = false;
        writeOutcome(outcome, out);
      }
      if (persist) {
        engine = Engine.fromBytes(engine.toBytes());
      }
    }
    return out.append("],\"error\":null}").toString();
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
    GroupWindow window = GroupWindow.restore(names, List.of(event), 1_700_000_000_000L, null, 8);
    EventCodec.Head head = EventCodec.decodeHead(EventCodec.encodeHead(window));
    boolean same = decoded.equals(event) && head.equals(new EventCodec.Head(names, 1_700_000_000_000L, null, 8, 7));
    List<Object> rendered = new ArrayList<>(decoded.values());
    rendered.set(rendered.size() - 1, "<MISSING>");
    Map<String, Object> response = new LinkedHashMap<>();
    response.put("roundTrip", same);
    response.put("values", rendered);
    response.put("error", null);
    return Json.write(response);
  }

  private static void writeOutcome(Outcome outcome, StringBuilder out) {
    out.append("{\"alerts\":[");
    for (int i = 0; i < outcome.alerts().size(); i++) {
      if (i > 0) {
        out.append(',');
      }
      out.append(outcome.alerts().get(i).toJsonText());
    }
    out.append("],\"lateGroups\":");
    Json.write(outcome.lateGroups(), out, false);
    out.append(",\"invalidReason\":");
    Json.write(outcome.invalidReason(), out, false);
    out.append('}');
  }

  /**
   * Keeps each group only as a head row plus one row per live event (id-keyed), written through the persistence
   * hooks as the Spark shell does; every get rebuilds the window from the rows.
   */
  static final class RowGroupStore implements GroupStore {
    private final Map<String, byte[]> heads = new HashMap<>();
    private final Map<String, TreeMap<Long, byte[]>> rows = new HashMap<>();

    @Override
    public GroupWindow get(String groupKey) {
      byte[] head = heads.get(groupKey);
      if (head == null) {
        return null;
      }
      EventCodec.Head decoded = EventCodec.decodeHead(head);
      List<StoredEvent> events = new ArrayList<>();
      for (Map.Entry<Long, byte[]> row : rows.get(groupKey).entrySet()) {
        StoredEvent event = EventCodec.decode(row.getValue());
        if (event.id() != row.getKey() || event.id() < decoded.minLiveId()) {
          throw new IllegalStateException("row " + row.getKey() + " holds event " + event.id());
        }
        events.add(event);
      }
      GroupWindow window =
          GroupWindow.restore(
              decoded.fieldNames(), events, decoded.maxEventTimeMs(), decoded.floorMs(), decoded.nextEventId());
      if (window.size() != events.size()) {
        throw new IllegalStateException("rows below the floor were not deleted");
      }
      return window;
    }

    @Override
    public void put(String groupKey, GroupWindow window) {
      TreeMap<Long, byte[]> groupRows = rows.computeIfAbsent(groupKey, k -> new TreeMap<>());
      List<StoredEvent> journal = window.takeJournal();
      List<Long> evicted = window.takeEvicted();
      if (window.takeReprojected()) {
        groupRows.clear();
        for (StoredEvent event : window.events()) {
          groupRows.put(event.id(), EventCodec.encode(event));
        }
      } else {
        for (StoredEvent event : journal) {
          groupRows.put(event.id(), EventCodec.encode(event));
        }
        for (Long id : evicted) {
          groupRows.remove(id);
        }
      }
      heads.put(groupKey, EventCodec.encodeHead(window));
    }

    @Override
    public void delete(String groupKey) {
      heads.remove(groupKey);
      rows.remove(groupKey);
    }
  }
}
