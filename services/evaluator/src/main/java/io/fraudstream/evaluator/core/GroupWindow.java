package io.fraudstream.evaluator.core;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Objects;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * One group's stored events, event-time horizon and per-rule aggregators (port of windows.GroupWindow).
 *
 * <p>Contracts: events are sorted by event time, ties by id (= insertion order), and addressed by absolute indices
 * that eviction and compaction never change. {@link #maxEventTimeMs()} is the largest event time ever stored and
 * {@link #maxIngestTsMs()} the largest ingestion timestamp; after {@link #setFloor} every live event is at or above
 * {@link #floorMs()}, which the caller sets after each insertion (an insertion below it is evaluated, then evicted by
 * that setFloor; a floor that moves down brings nothing back). {@link
 * #fieldNames()} is the projection the events' values follow; {@link #prepare} changes it. Exact aggregators are
 * derived state, rebuilt from the events after {@link #restore} or resumed from a snapshot ({@link #resume});
 * bucketed ones (rules with a window precision) are state of their own, restored by their spec key, kept across a
 * change of projection and trimmed each to its own floor, {@code maxEventTimeMs - (window + lateness)} ({@link
 * #setFloor}).
 *
 * <p>Persistence hooks, each reporting what changed since its previous call: {@link #takeJournal()} (events inserted
 * and still live), {@link #takeEvicted()} (ids of events that fell below the floor after the journal gave them out,
 * or after they were restored: an event evicted before then has no row), {@link #takeReprojected()} (whether the
 * projection changed, so every live event must be rewritten), {@link #takeBucketChanges()} (the bucket slots written
 * or dropped in any rule). Applying them and writing the head after each batch keeps a row-per-event,
 * row-per-bucket-slot copy exact ({@link GroupRows}). A written window's {@link #snapshot} (the index of its events and
 * its exact aggregators' state) lets {@link #resume} continue it over those rows without reading any. Not
 * thread-safe.
 *
 * <p>Paging: once its events are written, a window with a {@link #attachPager pager} may drop their decoded form
 * ({@link #pageOut}) and keep only each event's time and id; an event it needs again is read back through the pager
 * (with the next {@link #PAGE} dropped ones after it). Which events stay is a matter of speed only: those within the
 * lateness of the newest, those just after each aggregator's {@link WindowAggregator#cursor cursor} (the far edges
 * the next insertions walk), and those read since the previous page-out are kept until the next.
 */
public final class GroupWindow implements EventLog {
  private static final int COMPACT_AFTER = 256;

  /** How many dropped events a page fault reads back at once, and how many after each cursor stay in memory. */
  public static final int PAGE = 64;

  /**
   * Heap estimates for {@link #heapBytes}. Measured with the test sources' {@code HeapPerGroup} (heap after full GC,
   * 20 000 groups of the benchmark's pair key group under one SUM rule, its transactions' fields): a window with its
   * share of the cache's maps, its index arrays and its rules' aggregators apart; a group with one event measured 1 361
   * B, the estimate 1 318. Computed from the objects themselves ({@link HeapSizes}): the index ({@link #indexBytes},
   * each array as allocated), each decoded event ({@link StoredEvent#heapBytes}) and each aggregator ({@link
   * WindowAggregator#heapBytes}), the parts that grow as a window lengthens or its rules change, so that the cache's
   * charge follows the heap whatever mix of windows and rules it holds. (Fixed charges of 30 B an indexed and 170 B a
   * decoded event fell behind a running detector's: at a full cache, its heap after full GC grew 81 MB from minute 8
   * to 20, 61 MB of it arrays of longs. A fixed 270 B an aggregator, measured for one SUM rule, put a group of the
   * benchmark's 50 rules at 4 189 B where it measured 3 455; it is now estimated at 3 862, measured 3 486.) A
   * further event measured 141.6 B, estimated 182.4: the decimal read from its amount was shared with other events
   * (its group key's strings are the window's, {@link #shared}). Estimated, not measured: a bucket of a bucketed
   * rule.
   */
  static final long WINDOW_BYTES = 630;

  /**
   * A rule's slot in {@link #aggregators}: the linked map's entry (40 B), the spec-aggregator pair (24 B) and a share
   * of the map's table (8 B); the aggregator itself charges what it holds ({@link WindowAggregator#heapBytes}).
   */
  static final long AGGREGATOR_ENTRY_BYTES = 72;

  static final long BUCKET_BYTES = 200;

  private List<String> fieldNames;
  private final ArrayList<StoredEvent> events = new ArrayList<>();
  private long[] times = new long[8];
  private long[] ids = new long[8];
  private int decoded; // events[i] != null, i >= head
  private long decodedBytes; // their StoredEvent.heapBytes()
  // The string values every decoded event shares by reference where its own are equal (StoredEvent#sharing), by
  // position: those of the first event decoded or inserted under the projection, so that a value every event
  // repeats (its group key's) is on the heap once a window, not once an event. Null until then.
  private Object[] shared;
  private long sharedBytes; // their HeapSizes.value, with the array's
  private EventPager pager;
  private long tailStart; // absolute index from which events are kept as inserted, until they age out of the tail
  private final List<Long> pagedIn = new ArrayList<>(); // absolute indices read back since the last page-out
  private int head; // events[:head] are evicted, awaiting compaction
  private long base; // absolute index of events[0]
  // Unboxed, each with a flag for "none yet": a box per insertion would be a young object a cached window keeps alive.
  private boolean hasMax;
  private long maxMs;
  private boolean hasMaxIngest;
  private long maxIngestMs;
  private boolean hasFloor;
  private long floorMs;
  private long evictedBeforeMs = Long.MIN_VALUE; // above the time of every event evicted from this window
  private long nextEventId;
  private final Map<String, Map.Entry<WindowSpec, WindowAggregator>> aggregators = new LinkedHashMap<>();
  // The arguments of the last prepare (by identity): the engine passes the same ones until a rule changes.
  private List<String> preparedFieldNames;
  private Map<String, WindowSpec> preparedSpecs;
  private Map<BucketsOf, TreeMap<Long, Bucket>> restoredBuckets = Map.of();
  // The exact aggregators of the snapshot this window was resumed from that no prepare took up yet, by slot.
  private Map<String, SavedAggregator> savedAggregators = Map.of();
  private boolean resumed;
  private final Set<BucketSlot> droppedBuckets = new LinkedHashSet<>();
  private List<StoredEvent> journal = new ArrayList<>();
  private List<Long> evicted = new ArrayList<>();
  private long journalFromId; // events with smaller ids were taken from the journal (or restored): they have rows
  private boolean reprojected;
  private final LongMinHeap liveIds = new LongMinHeap();
  private final Set<Long> evictedIds = new HashSet<>();

  /**
   * Which buckets are one bucketed rule window's: its window start seq (unique among the engine's windows, and never
   * reused) and its precision, the part of its {@link WindowSpec.Key} that its persisted buckets carry.
   */
  public record BucketsOf(long windowStartSeq, long precisionMs) {
    static BucketsOf of(WindowSpec.Key key) {
      return new BucketsOf(key.windowStartSeq(), key.precisionMs());
    }
  }

  /**
   * One bucket index at one precision: the bucket {@code index} of every bucketed rule of precision {@code
   * precisionMs} (the same span of event time for each, {@code floorDiv(t, p)}), persisted together as one row.
   */
  public record BucketSlot(long precisionMs, long index) {}

  /** The indices the buckets of one precision span, first to last (not every index in between holds a bucket). */
  public record BucketSpan(long precisionMs, long first, long last) {}

  /** An empty window projecting {@code fieldNames}. */
  public GroupWindow(List<String> fieldNames) {
    this.fieldNames = List.copyOf(fieldNames);
  }

  /**
   * A window holding {@code events} (any order; sorted by event time, then id; those below {@code floorMs} dropped)
   * and the buckets of bucketed rules by their window (taken up by {@link #prepare}), with empty journal, evictions,
   * bucket changes and reprojection flag. The window owns the bucket maps from then on: it keeps and changes them.
   */
  static GroupWindow restore(
      List<String> fieldNames,
      List<StoredEvent> events,
      Long maxEventTimeMs,
      Long floorMs,
      long nextEventId,
      Long maxIngestTsMs,
      Map<BucketsOf, TreeMap<Long, Bucket>> buckets) {
    GroupWindow window = withHead(fieldNames, maxEventTimeMs, floorMs, nextEventId, maxIngestTsMs, buckets);
    List<StoredEvent> sorted = new ArrayList<>(events);
    sorted.sort(Comparator.comparingLong(StoredEvent::eventTimeMs).thenComparingLong(StoredEvent::id));
    for (StoredEvent event : sorted) {
      if (floorMs == null || event.eventTimeMs() >= floorMs) {
        window.events.add(window.share(event));
        window.liveIds.add(event.id());
      }
    }
    window.times = new long[Math.max(8, window.events.size() * 2)];
    window.ids = new long[window.times.length];
    for (int i = 0; i < window.events.size(); i++) {
      window.times[i] = window.events.get(i).eventTimeMs();
      window.ids[i] = window.events.get(i).id();
    }
    for (StoredEvent event : window.events) {
      window.countDecoded(event, 1);
    }
    return window;
  }

  /**
   * The window {@code snapshot} was taken from ({@link #snapshot}), given its head and, as for {@link #restore}, its
   * buckets, with every event paged out: attach a pager ({@link #attachPager}) before use. Its exact aggregators are
   * resumed from the snapshot by {@link #prepare} where their spec is still the same; the others are built.
   */
  static GroupWindow resume(EventCodec.Head head, Snapshot snapshot, Map<BucketsOf, TreeMap<Long, Bucket>> buckets) {
    GroupWindow window =
        withHead(
            head.fieldNames(),
            head.maxEventTimeMs(),
            head.floorMs(),
            head.nextEventId(),
            head.maxIngestTsMs(),
            buckets);
    int size = snapshot.times().length;
    window.events.addAll(Collections.nCopies(size, null));
    window.times = Arrays.copyOf(snapshot.times(), Math.max(8, size * 2));
    window.ids = Arrays.copyOf(snapshot.ids(), window.times.length);
    for (long id : snapshot.ids()) {
      window.liveIds.add(id);
    }
    window.tailStart = size;
    window.savedAggregators = new HashMap<>(snapshot.aggregators());
    window.resumed = true;
    return window;
  }

  private static GroupWindow withHead(
      List<String> fieldNames,
      Long maxEventTimeMs,
      Long floorMs,
      long nextEventId,
      Long maxIngestTsMs,
      Map<BucketsOf, TreeMap<Long, Bucket>> buckets) {
    GroupWindow window = new GroupWindow(fieldNames);
    window.restoredBuckets = new LinkedHashMap<>(buckets);
    window.hasMax = maxEventTimeMs != null;
    window.maxMs = window.hasMax ? maxEventTimeMs : 0;
    window.hasMaxIngest = maxIngestTsMs != null;
    window.maxIngestMs = window.hasMaxIngest ? maxIngestTsMs : 0;
    window.hasFloor = floorMs != null;
    window.floorMs = window.hasFloor ? floorMs : 0;
    window.nextEventId = nextEventId;
    window.journalFromId = nextEventId;
    return window;
  }

  /**
   * A window's state apart from its events' contents and its buckets: the time and id of each live event, in order,
   * and, by slot, each exact aggregator's state ({@link WindowAggregator#snapshot}) with its spec's identity.
   */
  record Snapshot(long[] times, long[] ids, Map<String, SavedAggregator> aggregators) {
    Snapshot {
      if (times.length != ids.length) {
        throw new IllegalArgumentException(times.length + " times for " + ids.length + " ids");
      }
      aggregators = Map.copyOf(aggregators);
    }

    @Override
    public boolean equals(Object other) {
      return other instanceof Snapshot that
          && Arrays.equals(times, that.times)
          && Arrays.equals(ids, that.ids)
          && aggregators.equals(that.aggregators);
    }

    @Override
    public int hashCode() {
      return Objects.hash(Arrays.hashCode(times), Arrays.hashCode(ids), aggregators);
    }

    @Override
    public String toString() {
      return "Snapshot" + Arrays.toString(times) + Arrays.toString(ids) + aggregators;
    }
  }

  /** One exact aggregator's state in a {@link Snapshot}, and the identity of the spec it follows. */
  record SavedAggregator(WindowSpec.Identity spec, AggregatorSnapshot state) {}

  /**
   * This window's {@link Snapshot}, from which {@link #resume} over the same events continues as this window would;
   * null while it has changes not yet written ({@link GroupRows#write}). An aggregator not yet rebuilt since this
   * window was resumed is saved as it was resumed.
   */
  Snapshot snapshot() {
    if (!journal.isEmpty() || !evicted.isEmpty() || reprojected || !droppedBuckets.isEmpty()) {
      return null;
    }
    long first = base + head;
    int size = size();
    Map<String, SavedAggregator> saved = new HashMap<>();
    for (Map.Entry<String, Map.Entry<WindowSpec, WindowAggregator>> slot : aggregators.entrySet()) {
      WindowAggregator aggregator = slot.getValue().getValue();
      long cursor = aggregator.cursor() - first;
      AggregatorSnapshot state = cursor >= 0 && cursor <= size ? aggregator.snapshot(first) : null;
      if (state != null) {
        saved.put(slot.getKey(), new SavedAggregator(slot.getValue().getKey().identity(), state));
      }
    }
    savedAggregators.forEach(saved::putIfAbsent);
    return new Snapshot(
        Arrays.copyOfRange(times, head, head + size), Arrays.copyOfRange(ids, head, head + size), saved);
  }

  public List<String> fieldNames() {
    return fieldNames;
  }

  /** Whether it was resumed from a snapshot ({@link #resume}) rather than built or restored from its events. */
  public boolean resumed() {
    return resumed;
  }

  public Long maxEventTimeMs() {
    return hasMax ? maxMs : null;
  }

  /** The largest ingestion timestamp of the events ever stored; null before the first. */
  public Long maxIngestTsMs() {
    return hasMaxIngest ? maxIngestMs : null;
  }

  public Long floorMs() {
    return hasFloor ? floorMs : null;
  }

  @Override
  public long evictedBeforeMs() {
    return evictedBeforeMs;
  }

  /** The id the next inserted event gets (ids start at 0 and only grow). */
  public long nextEventId() {
    return nextEventId;
  }

  /** Number of live events. */
  public int size() {
    return events.size() - head;
  }

  /** The live events in order (an unmodifiable view, valid until the next change); reads back any paged out. */
  public List<StoredEvent> events() {
    for (int i = head; i < events.size(); i++) {
      if (events.get(i) == null) {
        pageIn(i);
      }
    }
    return Collections.unmodifiableList(events.subList(head, events.size()));
  }

  /** Where {@link #eventAt} reads back events {@link #pageOut} dropped; set on every use (a pager may be per task). */
  public void attachPager(EventPager newPager) {
    pager = newPager;
  }

  /** Number of live events held decoded in memory (the others are paged out). */
  public int decodedCount() {
    return decoded;
  }

  /** An estimate of the heap the window holds (the constants above), by which the shell bounds its cache. */
  public long heapBytes() {
    long aggregatorBytes = AGGREGATOR_ENTRY_BYTES * aggregators.size();
    for (Map.Entry<WindowSpec, WindowAggregator> aggregator : aggregators.values()) {
      aggregatorBytes += aggregator.getValue().heapBytes();
    }
    return WINDOW_BYTES + aggregatorBytes + indexBytes() + sharedBytes + decodedBytes + BUCKET_BYTES * bucketCount();
  }

  /**
   * The index of the events in {@link #events}: their times and ids, the live-id heap and the list's slots; each
   * array as allocated, growth room included. The list's are taken to be as many as the times' (neither shrinks when
   * evicted events are compacted away; the list grows by half where the times double).
   */
  long indexBytes() {
    return 2 * HeapSizes.longArray(times.length) + liveIds.heapBytes() + HeapSizes.referenceArray(times.length);
  }

  /**
   * Drops the decoded form of the live events that no next step is expected to read (see the class comment), or of
   * every live event with {@code everything}. Only after the window's changes were written ({@link GroupRows#write}):
   * a window with unwritten events, an unwritten reprojection or no pager keeps everything.
   */
  public void pageOut(boolean everything) {
    if (pager == null || !journal.isEmpty() || reprojected) {
      return;
    }
    if (everything) {
      for (int i = head; i < events.size(); i++) {
        drop(i);
      }
      pagedIn.clear();
      tailStart = endIndex();
      return;
    }
    long[] cursors = cursors();
    long tailMs = 0;
    for (Map.Entry<WindowSpec, WindowAggregator> aggregator : aggregators.values()) {
      tailMs = Math.max(tailMs, aggregator.getKey().latenessMs);
    }
    long newTailStart = !hasMax ? endIndex() : Math.max(tailStart, indexAtOrAfter(maxMs - tailMs));
    for (long index = Math.max(tailStart, base + head); index < newTailStart; index++) {
      dropUnlessNear(index, cursors);
    }
    tailStart = newTailStart;
    for (long index : pagedIn) {
      if (index < tailStart) {
        dropUnlessNear(index, cursors);
      }
    }
    pagedIn.clear();
  }

  private long[] cursors() {
    long[] cursors = new long[aggregators.size()];
    int n = 0;
    for (Map.Entry<WindowSpec, WindowAggregator> aggregator : aggregators.values()) {
      long cursor = aggregator.getValue().cursor();
      if (cursor >= 0) {
        cursors[n++] = cursor;
      }
    }
    return Arrays.copyOf(cursors, n);
  }

  private void dropUnlessNear(long index, long[] cursors) {
    for (long cursor : cursors) {
      if (index >= cursor && index < cursor + PAGE) {
        return;
      }
    }
    int position = (int) (index - base);
    if (position >= head && position < events.size()) {
      drop(position);
    }
  }

  private void drop(int position) {
    StoredEvent event = events.get(position);
    if (event != null) {
      events.set(position, null);
      countDecoded(event, -1);
    }
  }

  /** Counts {@code event} in (+1) or out of (-1) the decoded events and their bytes, which move together. */
  private void countDecoded(StoredEvent event, int sign) {
    decoded += sign;
    decodedBytes += sign * event.heapBytes();
  }

  /** The values decoded events share: adopted from {@code values}' strings if there are none yet. */
  private Object[] sharedFor(Object[] values) {
    if (shared == null) {
      shared = new Object[values.length];
      sharedBytes = HeapSizes.referenceArray(values.length);
      for (int i = 0; i < values.length; i++) {
        if (values[i] instanceof String) {
          shared[i] = values[i];
          sharedBytes += HeapSizes.value(values[i]);
        }
      }
    }
    return shared;
  }

  /** {@code event} sharing the window's values ({@link StoredEvent#sharing}), which it may set up. */
  private StoredEvent share(StoredEvent event) {
    if (shared == null) {
      Object[] values = event.values().toArray();
      return event.withValues(values, sharedFor(values)); // charged without what it now shares
    }
    return event.sharing(shared);
  }

  /** Reads back the paged-out event at {@code position} and the next dropped ones, up to {@link #PAGE}. */
  private StoredEvent pageIn(int position) {
    if (pager == null) {
      throw new IllegalStateException("event " + ids[position] + " was paged out and the window has no pager");
    }
    int end = Math.min(events.size(), position + PAGE);
    for (int i = position; i < end; i++) {
      if (events.get(i) == null) {
        StoredEvent stored = pager.load(ids[i]);
        if (stored == null || stored.id() != ids[i]) {
          throw new CorruptStateException("the stored copy of event " + ids[i] + " is missing");
        }
        StoredEvent event = share(stored);
        events.set(i, event);
        countDecoded(event, 1);
        pagedIn.add(base + i);
      }
    }
    return events.get(position);
  }

  /**
   * Events inserted since the previous call, in insertion order, that are still live (an evicted one stays out,
   * whatever the floor does after its eviction); after a reprojection only those inserted since it (all live events
   * are to be rewritten then anyway).
   */
  public List<StoredEvent> takeJournal() {
    List<StoredEvent> taken = journal;
    journal = new ArrayList<>();
    journalFromId = nextEventId;
    return taken;
  }

  /** Ids of the events taken from the journal (or restored) that fell below the floor since the previous call. */
  public List<Long> takeEvicted() {
    List<Long> taken = evicted;
    evicted = new ArrayList<>();
    return taken;
  }

  /** Whether {@link #prepare} changed the projection since the previous call. */
  public boolean takeReprojected() {
    boolean taken = reprojected;
    reprojected = false;
    return taken;
  }

  // EventLog

  @Override
  public long endIndex() {
    return base + events.size();
  }

  @Override
  public long timeAt(long index) {
    return times[(int) (index - base)];
  }

  @Override
  public StoredEvent eventAt(long index) {
    int position = (int) (index - base);
    StoredEvent event = events.get(position);
    return event != null ? event : pageIn(position);
  }

  @Override
  public long indexAtOrAfter(long eventTimeMs) {
    return base + bisect(eventTimeMs, false);
  }

  /** First position >= head whose time is >= t (bisect_left) or > t (bisect_right). */
  private int bisect(long eventTimeMs, boolean right) {
    int lo = head;
    int hi = events.size();
    while (lo < hi) {
      int mid = (lo + hi) >>> 1;
      if (right ? times[mid] <= eventTimeMs : times[mid] < eventTimeMs) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return lo;
  }

  /**
   * Adopt projection {@code newFieldNames} and keep exactly one up-to-date aggregator per spec (by rule id): an exact
   * one rebuilt from the events when its spec changed, a bucketed one kept (with its buckets) while its key is the
   * same. Buckets of rules no longer in {@code specs} are dropped. Preparing again with the same two objects changes
   * nothing and costs nothing.
   */
  void prepare(List<String> newFieldNames, Map<String, WindowSpec> specs) {
    if (newFieldNames == preparedFieldNames && specs == preparedSpecs) {
      return;
    }
    if (!newFieldNames.equals(fieldNames)) {
      events(); // reads back every paged-out event: all are rewritten
      Map<String, Integer> positions = new HashMap<>();
      for (int i = 0; i < fieldNames.size(); i++) {
        positions.put(fieldNames.get(i), i);
      }
      int[] picks = new int[newFieldNames.size()];
      for (int i = 0; i < picks.length; i++) {
        picks[i] = positions.getOrDefault(newFieldNames.get(i), -1);
      }
      shared = null; // the positions change
      sharedBytes = 0;
      for (int i = head; i < events.size(); i++) {
        StoredEvent event = events.get(i);
        Object[] values = new Object[picks.length];
        for (int j = 0; j < picks.length; j++) {
          values[j] = picks[j] < 0 ? Missing.MISSING : event.value(picks[j]);
        }
        StoredEvent rewritten = event.withValues(values, sharedFor(values));
        countDecoded(event, -1);
        countDecoded(rewritten, 1);
        events.set(i, rewritten);
      }
      journal.clear(); // every live event is rewritten after a reprojection
      fieldNames = List.copyOf(newFieldNames);
      aggregators.values().removeIf(entry -> !(entry.getValue() instanceof BucketedWindow));
      savedAggregators = Map.of();
      reprojected = true;
    }
    aggregators.entrySet().removeIf(slot -> !specs.containsKey(slot.getKey()) && dropBuckets(slot.getValue()));
    for (Map.Entry<String, WindowSpec> entry : specs.entrySet()) {
      Map.Entry<WindowSpec, WindowAggregator> current = aggregators.get(entry.getKey());
      WindowSpec spec = entry.getValue();
      if (current != null && current.getKey() == spec) {
        continue;
      }
      if (current != null && current.getValue() instanceof BucketedWindow kept && current.getKey().key.equals(spec.key)) {
        kept.rebind(spec); // the new spec's value function follows the current projection
        aggregators.put(entry.getKey(), Map.entry(spec, kept));
        continue;
      }
      if (current != null && current.getKey().equals(spec)) {
        continue;
      }
      if (current != null) {
        dropBuckets(current);
      }
      WindowAggregator aggregator;
      if (spec.precisionMs() == null) {
        aggregator = resumedAggregator(entry.getKey(), spec);
        if (aggregator == null) {
          aggregator = spec.build(this, maxEventTimeMs());
        }
      } else {
        TreeMap<Long, Bucket> restored =
            restoredBuckets.isEmpty() ? null : restoredBuckets.remove(BucketsOf.of(spec.key));
        aggregator = new BucketedWindow(spec, restored == null ? new TreeMap<>() : restored);
      }
      aggregators.put(entry.getKey(), Map.entry(spec, aggregator));
    }
    if (!restoredBuckets.isEmpty()) { // buckets of rules no longer in the plan
      for (Map.Entry<BucketsOf, TreeMap<Long, Bucket>> stale : restoredBuckets.entrySet()) {
        for (Long index : stale.getValue().keySet()) {
          droppedBuckets.add(new BucketSlot(stale.getKey().precisionMs(), index));
        }
      }
      restoredBuckets = Map.of();
    }
    savedAggregators = Map.of(); // those left are of rules no longer in the plan
    preparedFieldNames = newFieldNames;
    preparedSpecs = specs;
  }

  /** The aggregator of {@code slot} resumed from the snapshot this window was resumed from, if its spec is the same. */
  private WindowAggregator resumedAggregator(String slot, WindowSpec spec) {
    SavedAggregator saved = savedAggregators.isEmpty() ? null : savedAggregators.remove(slot);
    return saved != null && saved.spec().equals(spec.identity()) ? spec.resume(saved.state(), base + head) : null;
  }

  /** Records every bucket of {@code aggregator}, if it is bucketed, as dropped; true (for removeIf). */
  private boolean dropBuckets(Map.Entry<WindowSpec, WindowAggregator> aggregator) {
    if (aggregator.getValue() instanceof BucketedWindow buckets) {
      long precisionMs = aggregator.getKey().precisionMs();
      for (Long index : buckets.takeDropped()) {
        droppedBuckets.add(new BucketSlot(precisionMs, index));
      }
      for (Long index : buckets.buckets().keySet()) {
        droppedBuckets.add(new BucketSlot(precisionMs, index));
      }
    }
    return true;
  }

  /**
   * Store an event (at or above the horizon) under the next id, and tell every aggregator. The event owns {@code
   * values}: the caller must not change the array afterwards.
   */
  StoredEvent insert(long eventTimeMs, long ingestTsMs, int partition, long offset, long ruleSeq, Object[] values) {
    StoredEvent event =
        StoredEvent.owning(
            nextEventId++, eventTimeMs, ingestTsMs, partition, offset, ruleSeq, values, sharedFor(values));
    int position;
    if (!hasMax || eventTimeMs >= maxMs) {
      position = events.size();
      maxMs = eventTimeMs;
      hasMax = true;
    } else {
      position = bisect(eventTimeMs, true);
    }
    if (events.size() == times.length) {
      times = Arrays.copyOf(times, times.length * 2);
      ids = Arrays.copyOf(ids, times.length);
    }
    System.arraycopy(times, position, times, position + 1, events.size() - position);
    System.arraycopy(ids, position, ids, position + 1, events.size() - position);
    times[position] = eventTimeMs;
    ids[position] = event.id();
    events.add(position, event);
    countDecoded(event, 1);
    if (!hasMaxIngest || ingestTsMs > maxIngestMs) {
      maxIngestMs = ingestTsMs;
      hasMaxIngest = true;
    }
    journal.add(event);
    liveIds.add(event.id());
    long index = base + position;
    if (index < tailStart) { // an out-of-order insertion before the tail: kept until the next page-out
      tailStart++;
      pagedIn.add(index);
    }
    for (Map.Entry<WindowSpec, WindowAggregator> aggregator : aggregators.values()) {
      aggregator.getValue().onInsert(this, index);
    }
    return event;
  }

  /** The aggregate of {@code slot}'s rule over {@code [eventTimeMs - windowMs, eventTimeMs]}. */
  WindowAggregate aggregate(String slot, long eventTimeMs) {
    return aggregators.get(slot).getValue().query(this, eventTimeMs);
  }

  /**
   * Set the floor, evicting the events below it; each bucketed rule keeps its buckets from the one holding {@code
   * maxEventTimeMs - (its window + lateness)} on.
   */
  void setFloor(long newFloorMs) {
    if (hasMax) {
      for (Map.Entry<WindowSpec, WindowAggregator> aggregator : aggregators.values()) {
        if (aggregator.getValue() instanceof BucketedWindow buckets) {
          WindowSpec spec = aggregator.getKey();
          buckets.retain(maxMs - spec.windowMs - spec.latenessMs);
        }
      }
    }
    floorMs = newFloorMs;
    hasFloor = true;
    // Also when the floor stays: an event below it may have been inserted since (not late for a bucketed rule).
    int h = head;
    boolean unwritten = false;
    while (h < events.size() && times[h] < newFloorMs) {
      long id = ids[h];
      if (id < journalFromId) {
        evicted.add(id);
      } else { // never taken from the journal: it has no row to remove, and it leaves the journal
        unwritten = true;
      }
      evictedIds.add(id);
      drop(h);
      h++;
    }
    if (unwritten) {
      journal.removeIf(event -> evictedIds.contains(event.id()));
    }
    if (h > head) {
      evictedBeforeMs = Math.max(evictedBeforeMs, times[h - 1] + 1);
    }
    if (h > COMPACT_AFTER && h * 2 > events.size()) {
      events.subList(0, h).clear();
      System.arraycopy(times, h, times, 0, events.size());
      System.arraycopy(ids, h, ids, 0, events.size());
      base += h;
      h = 0;
    }
    head = h;
    pruneLiveIds();
  }

  /** The bucket slots written or dropped in any rule since the previous call, each once. */
  Set<BucketSlot> takeBucketChanges() {
    Set<BucketSlot> changes = new LinkedHashSet<>(droppedBuckets);
    droppedBuckets.clear();
    for (Map.Entry<WindowSpec, WindowAggregator> aggregator : aggregators.values()) {
      if (aggregator.getValue() instanceof BucketedWindow buckets) {
        long precisionMs = aggregator.getKey().precisionMs();
        for (Long index : buckets.takeDropped()) {
          changes.add(new BucketSlot(precisionMs, index));
        }
        for (Long index : buckets.takeWritten()) {
          changes.add(new BucketSlot(precisionMs, index));
        }
      }
    }
    return changes;
  }

  /** What {@link #forEachBuckets} gives: one bucketed rule window's buckets by index (a read-only view). */
  @FunctionalInterface
  private interface WindowBucketsVisitor {
    void visit(long windowStartSeq, long precisionMs, NavigableMap<Long, Bucket> buckets);
  }

  /** Visits each bucketed rule window's buckets: restored ones no {@link #prepare} took up yet, then live ones. */
  private void forEachBuckets(WindowBucketsVisitor visitor) {
    for (Map.Entry<BucketsOf, TreeMap<Long, Bucket>> restored : restoredBuckets.entrySet()) {
      BucketsOf of = restored.getKey();
      visitor.visit(of.windowStartSeq(), of.precisionMs(), restored.getValue());
    }
    for (Map.Entry<WindowSpec, WindowAggregator> aggregator : aggregators.values()) {
      if (aggregator.getValue() instanceof BucketedWindow buckets) {
        WindowSpec.Key key = aggregator.getKey().key;
        visitor.visit(key.windowStartSeq(), key.precisionMs(), buckets.buckets());
      }
    }
  }

  /** The buckets held at {@code slot}, by window start seq; empty if none. */
  SortedMap<Long, Bucket> bucketsAt(BucketSlot slot) {
    SortedMap<Long, Bucket> held = new TreeMap<>();
    forEachBuckets(
        (seq, precisionMs, buckets) -> {
          Bucket bucket = precisionMs == slot.precisionMs() ? buckets.get(slot.index()) : null;
          if (bucket != null) {
            held.put(seq, bucket);
          }
        });
    return held;
  }

  /** Every bucket slot at which some bucketed rule holds a bucket. */
  Set<BucketSlot> bucketSlots() {
    Set<BucketSlot> slots = new LinkedHashSet<>();
    forEachBuckets(
        (seq, precisionMs, buckets) -> {
          for (Long index : buckets.keySet()) {
            slots.add(new BucketSlot(precisionMs, index));
          }
        });
    return slots;
  }

  /** Per precision, the span of the indices its buckets are at, over every bucketed rule, by increasing precision. */
  List<BucketSpan> bucketSpans() {
    TreeMap<Long, BucketSpan> spans = new TreeMap<>();
    forEachBuckets(
        (seq, precisionMs, buckets) -> {
          if (!buckets.isEmpty()) {
            BucketSpan rule = new BucketSpan(precisionMs, buckets.firstKey(), buckets.lastKey());
            spans.merge(
                precisionMs,
                rule,
                (a, b) -> new BucketSpan(precisionMs, Math.min(a.first(), b.first()), Math.max(a.last(), b.last())));
          }
        });
    return List.copyOf(spans.values());
  }

  /** Number of buckets held (by every bucketed rule, restored ones included). */
  public int bucketCount() {
    int[] count = {0};
    forEachBuckets((seq, precisionMs, buckets) -> count[0] += buckets.size());
    return count[0];
  }

  private void pruneLiveIds() {
    while (!liveIds.isEmpty() && evictedIds.remove(liveIds.peek())) {
      liveIds.poll();
    }
  }

  /** Smallest id of a live event, or {@link #nextEventId()} if none is live. */
  public long minLiveId() {
    pruneLiveIds();
    return liveIds.isEmpty() ? nextEventId : liveIds.peek();
  }
}
