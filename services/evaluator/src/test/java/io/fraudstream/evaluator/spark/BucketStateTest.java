package io.fraudstream.evaluator.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fraudstream.evaluator.core.Engine;
import io.fraudstream.evaluator.core.EventCodec;
import io.fraudstream.evaluator.core.GroupRows;
import io.fraudstream.evaluator.core.GroupWindow;
import io.fraudstream.evaluator.core.Outcome;
import io.fraudstream.evaluator.core.RejectedRuleMessageException;
import io.fraudstream.evaluator.core.StoredEvent;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.IntStream;
import java.util.stream.LongStream;
import org.apache.spark.sql.streaming.TimeMode;
import org.junit.jupiter.api.Test;

/**
 * BucketState in Spark's TwsTester (through a probe that holds the same state handles as BucketProcessor): the
 * per-JVM cache is trusted only while the bucket's stored generation is the one it wrote, and the store holds one
 * head per group and one row per live event.
 */
class BucketStateTest {
  private static final long T0 = 1_700_000_000_000L;
  private static final String GROUP = "[[\"payerId\"],[\"p1\"]]";
  private static final String OTHER_GROUP = "[[\"payerId\"],[\"p2\"]]";

  private final String cacheKey = "bucket-state-test-" + UUID.randomUUID() + "#0";
  private final BucketStateProbe probe = new BucketStateProbe();
  private final Tester<Integer> tester = new Tester<>(probe, TimeMode.None());

  private BucketState claim() {
    return claim(0);
  }

  private BucketState claim(long cacheBytes) {
    AtomicReference<BucketState> claimed = new AtomicReference<>();
    probe.run(
        tester,
        0,
        h -> claimed.set(BucketState.claim(cacheKey, h, 60_000, 300_000, cacheBytes, T0)));
    return claimed.get();
  }

  /** A claim of a bucket restored from a store whose rule set is a count rule of {@code windowMinutes}. */
  private BucketState claimRestored(int windowMinutes) {
    Engine stored = new Engine(60_000, 300_000);
    addCountRule(stored, windowMinutes);
    StoredRows.setEngine(tester, 0, stored.toBytes());
    return claim();
  }

  private static void addCountRule(Engine engine, int windowMinutes) {
    try {
      engine.onRule("ns/count", bytes(Records.countRule("ns/count", windowMinutes, 1000)), T0);
    } catch (RejectedRuleMessageException exc) {
      throw new AssertionError(exc);
    }
  }

  private static byte[] bytes(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }

  /** Evaluates transactions of {@code payerId} at {@code eventTimesMs} through the bucket's groups; flushes them. */
  private void evaluate(BucketState state, String payerId, long... eventTimesMs) {
    probe.run(
        tester,
        0,
        h -> evaluateIn(state.new Groups(h), state, payerId, eventTimesMs));
  }

  private static void evaluateIn(BucketState.Groups groups, BucketState state, String payerId, long... eventTimesMs) {
    for (long eventTimeMs : eventTimesMs) {
      byte[] tx = bytes(Records.transaction("t" + eventTimeMs, payerId, eventTimeMs));
      Outcome outcome = state.engine().onRecord(tx, eventTimeMs, 0, eventTimeMs, groups, eventTimeMs, key -> true);
      assertNull(outcome.rejection());
    }
    groups.flush();
  }

  private GroupWindow read(BucketState state, String groupKey) {
    AtomicReference<GroupWindow> window = new AtomicReference<>();
    probe.run(tester, 0, h -> window.set(state.new Groups(h).get(groupKey)));
    return window.get();
  }

  private Map<String, byte[]> heads() {
    return tester.map(BucketStore.HEADS, 0);
  }

  private TreeSet<String> eventRows() {
    return new TreeSet<>(StoredRows.tagged(tester, 0, BucketStore.EVENT_TAG).keySet());
  }

  private static String row(String groupKey, long id) {
    return groupKey + '\u0001' + id;
  }

  @Test
  void aClaimKeepsTheCacheWhileTheStoredGenerationIsTheOneItWrote() {
    BucketState first = claim();
    long written = StoredRows.generation(tester, 0);
    addCountRule(first.engine(), 10); // in the cache only: nothing writes the rule set to the store here
    BucketState second = claim();
    assertSame(first, second);
    assertNotEquals(written, (long) StoredRows.generation(tester, 0), "every claim writes a new generation");
    assertEquals(1, second.engine().activeRuleCount(), "the cached engine, not the store's");
  }

  @Test
  void aClaimAfterTheStoreChangedGenerationReloadsFromTheStore() {
    BucketState cached = claim();
    addCountRule(cached.engine(), 10);
    // Another JVM processed the bucket (or a failed task's writes were discarded): the generation differs.
    StoredRows.setGeneration(tester, 0, 7L);
    BucketState reloaded = claim();
    assertNotSame(cached, reloaded);
    assertEquals(0, reloaded.engine().activeRuleCount(), "the store holds no rule set");
    assertNotEquals(7L, (long) StoredRows.generation(tester, 0));
    Engine stored = new Engine(5_000, 1_000);
    addCountRule(stored, 10);
    StoredRows.setEngine(tester, 0, stored.toBytes());
    StoredRows.setGeneration(tester, 0, 3L);
    BucketState fromStore = claim();
    assertEquals(1, fromStore.engine().activeRuleCount());
    assertEquals(60_000, fromStore.engine().latenessMs(), "the configured settings, not the stored ones");
  }

  @Test
  void aClaimAfterAFailedTaskWasRetriedInAnotherJvmReloads() {
    BucketState cached = claim(); // this JVM's task, which then fails: the store keeps the generation it had
    addCountRule(cached.engine(), 10);
    StoredRows.setGeneration(tester, 0, 0L);
    // The retry, in another JVM (another cache), commits its own claim of the same stored generation.
    probe.run(
        tester,
        0,
        h -> BucketState.claim(cacheKey + "-other-jvm", h, 60_000, 300_000, 0, T0));
    BucketState next = claim();
    assertNotSame(cached, next, "the first JVM's cache lacks the retry's work");
    assertEquals(0, next.engine().activeRuleCount());
  }

  @Test
  void groupsAreWrittenAsAHeadAndOneRowPerEventAndReadBackAfterAReload() {
    BucketState state = claim();
    addCountRule(state.engine(), 10);
    evaluate(state, "p1", T0, T0 + 1_000);
    assertEquals(List.of(GROUP), new ArrayList<>(heads().keySet()));
    assertEquals(new TreeSet<>(List.of(row(GROUP, 0), row(GROUP, 1))), eventRows());
    EventCodec.Head head = EventCodec.decodeHead(heads().get(GROUP));
    assertEquals(2, head.nextEventId());
    assertEquals(T0 + 1_000, head.maxEventTimeMs());
    StoredEvent second = EventCodec.decode(StoredRows.tagged(tester, 0, BucketStore.EVENT_TAG).get(row(GROUP, 1)));
    assertEquals(T0 + 1_000, second.eventTimeMs());

    StoredRows.setGeneration(tester, 0, 100L);
    BucketState reloaded = claim();
    assertNotSame(state, reloaded);
    GroupWindow window = read(reloaded, GROUP);
    assertEquals(List.of(T0, T0 + 1_000), window.events().stream().map(StoredEvent::eventTimeMs).toList());
    assertEquals(T0 + 1_000, window.maxIngestTsMs());
    assertNull(read(reloaded, OTHER_GROUP), "a group the store does not hold");
  }

  @Test
  void eventsThatLeaveTheWindowLeaveTheStore() {
    BucketState state = claim();
    addCountRule(state.engine(), 1); // horizon: 1 minute + 60 s lateness
    evaluate(state, "p1", T0, T0 + 60_000);
    assertEquals(new TreeSet<>(List.of(row(GROUP, 0), row(GROUP, 1))), eventRows());
    evaluate(state, "p1", T0 + 120_001);
    assertEquals(new TreeSet<>(List.of(row(GROUP, 1), row(GROUP, 2))), eventRows());
    assertEquals(1, EventCodec.decodeHead(heads().get(GROUP)).minLiveId());
  }

  @Test
  void aBucketedRuleKeepsOneRowPerBucketAndTheyAreReadBackAfterAReload() throws RejectedRuleMessageException {
    BucketState state = claim();
    String rule = Records.countRule("ns/hourly", 1440, 3).replace("\"windowMinutes\": 1440", "\"windowMinutes\": 1440, \"windowPrecisionSeconds\": 3600");
    state.engine().onRule("ns/hourly", bytes(rule), T0);
    evaluate(state, "p1", T0, T0 + 1, T0 + 3_600_000);
    assertEquals(new TreeSet<>(), eventRows(), "no events: the key group's only rule is bucketed");
    assertEquals(2, StoredRows.tagged(tester, 0, BucketStore.BUCKET_TAG).size(), "two hourly buckets");
    StoredRows.setEngine(tester, 0, state.engine().toBytes()); // what the processor persists after a rule
    StoredRows.setGeneration(tester, 0, 100L);
    BucketState reloaded = claim();
    assertEquals(2, read(reloaded, GROUP).bucketCount());
    List<Outcome> outcomes = new ArrayList<>();
    probe.run(
        tester,
        0,
        h -> {
          BucketState.Groups groups = reloaded.new Groups(h);
          byte[] tx = bytes(Records.transaction("t4", "p1", T0 + 3_600_001));
          outcomes.add(reloaded.engine().onRecord(tx, T0 + 3_600_001, 0, 4, groups, 0, key -> true));
          groups.flush();
        });
    assertEquals(1, outcomes.get(0).alerts().size(), "four in the day's buckets, at least three: one alert");
  }

  @Test
  void aDeletedGroupLeavesNoRow() {
    BucketState state = claim();
    addCountRule(state.engine(), 10);
    evaluate(state, "p1", T0, T0 + 1);
    evaluate(state, "p2", T0 + 2);
    probe.run(tester, 0, h -> state.new Groups(h).delete(GROUP));
    assertEquals(List.of(OTHER_GROUP), new ArrayList<>(heads().keySet()));
    assertEquals(new TreeSet<>(List.of(row(OTHER_GROUP, 0))), eventRows());
    assertNull(read(state, GROUP), "nor a cached window");
  }

  @Test
  void aSweepDeletesTheGroupsPastTheirHorizonOnTheEnginesClock() {
    BucketState state = claim();
    addCountRule(state.engine(), 1);
    evaluate(state, "p1", T0);
    evaluate(state, "p2", pastTheHorizon());
    assertEquals(List.of(true), sweep(state, List.of(T0 + 1_000), 1_000, Integer.MAX_VALUE));
    assertEquals(List.of(OTHER_GROUP), new ArrayList<>(heads().keySet()));
    assertEquals(15, eventRows().size());
  }

  @Test
  void aSweepIsDueOnceAnIntervalAfterTheLastFinished() {
    BucketState state = claim();
    List<Long> calls = List.of(T0 + 999, T0 + 1_000, T0 + 1_500, T0 + 1_999, T0 + 2_000);
    assertEquals(List.of(false, true, false, false, true), sweep(state, calls, 1_000, Integer.MAX_VALUE));
  }

  @Test
  void aSweepWalksTheGroupsASliceACallAndDeletesEveryExpiredOne() {
    BucketState state = threeGroupsTwoPastTheirHorizon();
    // Three groups, one looked at a call: the walk finishes in the third call, and then the sweep is not due again.
    List<Long> calls = List.of(T0 + 1_000, T0 + 1_001, T0 + 1_002, T0 + 1_003);
    assertEquals(List.of(false, false, true, false), sweep(state, calls, 1_000, 1));
    assertEquals(List.of(OTHER_GROUP), new ArrayList<>(heads().keySet()));
  }

  @Test
  void aWalkLeftUnfinishedByItsTaskStartsOverInTheNext() {
    BucketState first = claimRestored(1); // which groups a restored store holds only a walk can tell
    evaluate(first, "p1", T0);
    evaluate(first, "p3", T0);
    evaluate(first, "p2", T0);
    assertEquals(List.of(false), sweep(first, List.of(T0 + 1_000), 1_000, 1));
    // The next task (a new generation) does not go on with the old task's walk (two groups left), whose store
    // iterator ended with that task: it walks all three groups again, and deletes the two now past their horizon.
    BucketState next = claim();
    evaluate(next, "p2", pastTheHorizon());
    assertEquals(List.of(false, false, true), sweep(next, List.of(T0 + 1_001, T0 + 1_002, T0 + 1_003), 1_000, 1));
    assertEquals(List.of(OTHER_GROUP), new ArrayList<>(heads().keySet()));
  }

  @Test
  void sparseCallsWalkMoreGroupsEach() {
    BucketState state = threeGroupsTwoPastTheirHorizon();
    // At least one group a call, and then as many as the call's share of the time since the walk's last step
    // allows: the first call, at the walk's start, looks at one group; the second, 10 s later with a share of all
    // of that time, finishes the walk.
    List<Boolean> finished = new ArrayList<>();
    probe.run(
        tester,
        0,
        h -> {
          for (long nowMs : List.of(T0 + 1_000, T0 + 11_000)) {
            finished.add(state.new Groups(h).sweep(nowMs, 1_000, 1, 1.0));
          }
        });
    assertEquals(List.of(false, true), finished);
    assertEquals(List.of(OTHER_GROUP), new ArrayList<>(heads().keySet()));
  }

  @Test
  void aGroupWithAnEventSinceTheWalkBeganIsKept() {
    MemoryStores m = new MemoryStores();
    BucketState state = claim();
    addCountRule(state.engine(), 1);
    evaluateIn(m.groups(state), state, "p1", T0);
    evaluateIn(m.groups(state), state, "p3", T0);
    evaluateIn(m.groups(state), state, "p2", pastTheHorizon());
    String p3 = "[[\"payerId\"],[\"p3\"]]";
    // The walk begins (p1, the first key, is past its horizon and deleted); then p3 gets an event, and the walk,
    // which still sees p3's old head, reaches it.
    assertEquals(false, m.groups(state).sweep(T0 + 1_000, 1_000, 1, 0));
    evaluateIn(m.groups(state), state, "p3", T0 + 120_020);
    assertEquals(false, m.groups(state).sweep(T0 + 1_001, 1_000, 1, 0));
    assertEquals(true, m.groups(state).sweep(T0 + 1_002, 1_000, 1, 0));
    assertEquals(List.of(OTHER_GROUP, p3), new ArrayList<>(m.heads().entries.keySet()));
  }

  @Test
  void aDueSweepDoesNotWalkWhileNoGroupCanBePastItsHorizon() {
    MemoryStores m = new MemoryStores();
    BucketState state = claim(); // an empty store: every group it will hold is written through this cache
    addCountRule(state.engine(), 1);
    evaluateIn(m.groups(state), state, "p1", T0);
    evaluateIn(m.groups(state), state, "p2", T0 + 60_000);
    assertEquals(true, m.groups(state).sweep(T0 + 1_000, 1_000, 1, 0));
    assertEquals(0, m.heads().iterations, "no walk: no group's newest event is past the horizon of the clock (T0)");
    // Once the clock passes T0 + the horizon (1-minute window, 1-minute lateness), p1 may be past it: a walk.
    evaluateIn(m.groups(state), state, "p2", pastTheHorizon());
    assertEquals(true, m.groups(state).sweep(T0 + 2_000, 1_000, Integer.MAX_VALUE, 0));
    assertEquals(1, m.heads().iterations);
    assertEquals(List.of(OTHER_GROUP), new ArrayList<>(m.heads().entries.keySet()));
  }

  @Test
  void aRestoredStoreIsWalkedOnceAndThenOnlyWhenItsOldestGroupCanBePastItsHorizon() {
    MemoryStores m = new MemoryStores();
    BucketState state = claimRestored(1);
    evaluateIn(m.groups(state), state, "p1", T0);
    evaluateIn(m.groups(state), state, "p2", T0 + 100_000);
    List<Boolean> finished = new ArrayList<>();
    List<Integer> walks = new ArrayList<>();
    for (long nowMs : List.of(T0 + 1_000, T0 + 2_000, T0 + 3_000)) {
      finished.add(m.groups(state).sweep(nowMs, 1_000, Integer.MAX_VALUE, 0));
      walks.add(m.heads().iterations);
    }
    assertEquals(List.of(true, true, true), finished);
    assertEquals(List.of(1, 1, 1), walks, "the first walk finds p1 (newest at T0) within the horizon, and keeps it");
    evaluateIn(m.groups(state), state, "p2", pastTheHorizon());
    assertEquals(true, m.groups(state).sweep(T0 + 4_000, 1_000, Integer.MAX_VALUE, 0));
    assertEquals(2, m.heads().iterations);
    assertEquals(List.of(OTHER_GROUP), new ArrayList<>(m.heads().entries.keySet()));
  }

  @Test
  void afterARuleChangeTheNextDueSweepWalksAndDeletesTheGroupsOfAKeyGroupLeftWithoutRules()
      throws RejectedRuleMessageException {
    MemoryStores m = new MemoryStores();
    BucketState state = claim();
    addCountRule(state.engine(), 10);
    evaluateIn(m.groups(state), state, "p1", T0);
    state.engine().onRule("ns/count", null, T0 + 1);
    state.rulesChanged();
    assertEquals(true, m.groups(state).sweep(T0 + 1_000, 1_000, Integer.MAX_VALUE, 0));
    assertEquals(1, m.heads().iterations);
    assertEquals(List.of(), new ArrayList<>(m.heads().entries.keySet()), "payerId has no rule left");
  }

  @Test
  void aRuleChangeWithNothingWrittenSinceTheLastWalkKeepsTheBoundsButAKeyGroupLeftWithoutRulesIsWalked()
      throws RejectedRuleMessageException {
    MemoryStores m = new MemoryStores();
    BucketState state = claimRestored(10);
    evaluateIn(m.groups(state), state, "p1", T0);
    assertEquals(true, m.groups(state).sweep(T0 + 1_000, 1_000, Integer.MAX_VALUE, 0));
    assertEquals(1, m.heads().iterations, "a restored store's first walk");
    state.engine().onRule("ns/other", bytes(Records.countRule("ns/other", "beneficiaryId", 1, 1)), T0);
    state.rulesChanged();
    assertEquals(true, m.groups(state).sweep(T0 + 2_000, 1_000, Integer.MAX_VALUE, 0));
    assertEquals(1, m.heads().iterations, "nothing written since the walk: the bounds still hold");
    state.engine().onRule("ns/count", null, T0 + 1);
    state.rulesChanged();
    assertEquals(true, m.groups(state).sweep(T0 + 3_000, 1_000, Integer.MAX_VALUE, 0));
    assertEquals(2, m.heads().iterations, "payerId, which the walk kept a group of, lost its rules");
    assertEquals(List.of(), new ArrayList<>(m.heads().entries.keySet()));
  }

  /** A bucket's stores in memory maps, whose iterators see a map as it was when they were made, as RocksDB's do. */
  private record MemoryStores(
      MemoryMapState<String, byte[]> heads, MemoryMapState<String, byte[]> rows, MemoryMapState<Long, byte[]> pending) {
    MemoryStores() {
      this(new MemoryMapState<>(), new MemoryMapState<>(), new MemoryMapState<>());
    }

    BucketState.Groups groups(BucketState state) {
      return state.new Groups(new BucketStore(heads, rows, pending));
    }
  }

  /** A claimed bucket with a 1-minute rule and the groups of p1 and p3 (at T0) past their horizon, p2's not. */
  private BucketState threeGroupsTwoPastTheirHorizon() {
    BucketState state = claim();
    addCountRule(state.engine(), 1);
    evaluate(state, "p1", T0);
    evaluate(state, "p3", T0);
    evaluate(state, "p2", pastTheHorizon());
    return state;
  }

  /** Enough event times past T0's 1-minute horizon (window and lateness) to move the engine's sweep clock there. */
  private static long[] pastTheHorizon() {
    long[] later = new long[15];
    for (int i = 0; i < later.length; i++) {
      later[i] = T0 + 120_001 + i;
    }
    return later;
  }

  /** What {@code state}'s sweep returns in one task call at each of {@code callsMs}. */
  private List<Boolean> sweep(BucketState state, List<Long> callsMs, long intervalMs, int limit) {
    List<Boolean> finished = new ArrayList<>();
    probe.run(
        tester,
        0,
        h -> {
          for (long nowMs : callsMs) {
            finished.add(state.new Groups(h).sweep(nowMs, intervalMs, limit, 0));
          }
        });
    return finished;
  }

  @Test
  void theCacheHoldsNoMoreBytesThanItsBudgetBeyondTheGroupsOfTheCurrentCall() {
    BucketState state = claim(1);
    addCountRule(state.engine(), 60);
    evaluate(state, "p1", T0, T0 + 1_000);
    GroupWindow first = read(state, GROUP);
    evaluate(state, "p2", T0 + 2_000);
    assertEquals(read(state, OTHER_GROUP).heapBytes(), state.cachedBytes(), "only the group of the last call");
    GroupWindow reloaded = read(state, GROUP);
    assertNotSame(first, reloaded, "dropped from the cache, read back from the store");
    assertEquals(List.of(T0, T0 + 1_000), reloaded.events().stream().map(StoredEvent::eventTimeMs).toList());
  }

  /** What one call's reads found and its flush evicted, evaluating {@code payerId}'s transactions at {@code times}. */
  private BucketState.CacheActivity activityOf(BucketState state, String payerId, long... eventTimesMs) {
    AtomicReference<BucketState.CacheActivity> activity = new AtomicReference<>();
    probe.run(
        tester,
        0,
        h -> {
          BucketState.Groups groups = state.new Groups(h);
          evaluateIn(groups, state, payerId, eventTimesMs);
          activity.set(groups.activity());
        });
    return activity.get();
  }

  @Test
  void aCallCountsWhereItsReadsFoundTheWindowsAndWhatItsFlushEvicted() {
    BucketState state = claim(1); // a budget of a byte: the flush keeps only the groups of its own call
    addCountRule(state.engine(), 60);
    assertEquals(new BucketState.CacheActivity(1, 0, 0, 1, 0), activityOf(state, "p1", T0, T0 + 1_000), "new, then cached");
    assertEquals(new BucketState.CacheActivity(0, 0, 0, 1, 1), activityOf(state, "p2", T0 + 2_000), "p1 evicted");
    assertEquals(new BucketState.CacheActivity(0, 1, 0, 0, 1), activityOf(state, "p1", T0 + 3_000), "p1 read back");
    assertTrue(state.budgetBytes() <= 1, "the budget split over the buckets cached in this JVM");
  }

  @Test
  void aWindowTheCacheDroppedIsResumedFromItsSnapshot() {
    BucketState state = claim(1); // a budget of a byte: the flush keeps only the groups of its own call
    addCountRule(state.engine(), 60);
    long[] times = LongStream.range(0, GroupRows.SNAPSHOT_MIN_EVENTS).map(i -> T0 + i * 1_000).toArray();
    activityOf(state, "p1", times);
    assertEquals(new BucketState.CacheActivity(0, 0, 0, 1, 1), activityOf(state, "p2", T0 + 20_000), "p1 evicted");
    assertEquals(
        new BucketState.CacheActivity(0, 0, 1, 0, 1), activityOf(state, "p1", T0 + 21_000), "p1 resumed, p2 evicted");
    assertEquals(GroupRows.SNAPSHOT_MIN_EVENTS + 1, read(state, GROUP).events().size());
    assertEquals(
        new BucketState.CacheActivity(0, 1, 0, 0, 1), activityOf(state, "p2", T0 + 22_000), "p2, of 1 event: loaded");
  }

  /** One call evaluating a transaction of each of {@code payerIds} in turn, a second apart from {@code fromMs}. */
  private void evaluateEach(BucketState state, long fromMs, List<String> payerIds) {
    probe.run(
        tester,
        0,
        h -> {
          BucketState.Groups groups = state.new Groups(h);
          for (int i = 0; i < payerIds.size(); i++) {
            long eventTimeMs = fromMs + i * 1_000L;
            byte[] tx = bytes(Records.transaction("t" + i, payerIds.get(i), eventTimeMs));
            assertNull(state.engine().onRecord(tx, eventTimeMs, 0, eventTimeMs, groups, eventTimeMs, key -> true).rejection());
          }
          groups.flush();
        });
  }

  @Test
  void aKeyGroupWhoseGroupsDoNotRecurHasItsNewGroupsWrittenAndNotKept() {
    BucketState state = claim();
    addCountRule(state.engine(), 60);
    assertEquals(0, state.droppingKeyGroups());
    evaluateEach(state, T0, IntStream.range(0, CacheAdmission.PERIOD).mapToObj(i -> "p" + i).toList());
    assertEquals(1, state.droppingKeyGroups(), "what the metric reports");
    long cachedBytes = state.cachedBytes();
    evaluate(state, "new", T0 + 10_000_000);
    assertEquals(cachedBytes, state.cachedBytes(), "written, then dropped from the cache");
    assertEquals(
        new BucketState.CacheActivity(0, 1, 0, 0, 0),
        activityOf(state, "new", T0 + 10_001_000),
        "read back from the store at its second call");
    assertTrue(state.cachedBytes() > cachedBytes, "and kept from then on");
    assertEquals(2, read(state, "[[\"payerId\"],[\"new\"]]").events().size());
  }

  @Test
  void aKeyGroupWhoseGroupsRecurKeepsItsNewGroups() {
    BucketState state = claim();
    addCountRule(state.engine(), 60);
    evaluateEach(state, T0, IntStream.range(0, CacheAdmission.PERIOD).mapToObj(i -> "p" + i % 100).toList());
    long cachedBytes = state.cachedBytes();
    evaluate(state, "new", T0 + 10_000_000);
    assertTrue(state.cachedBytes() > cachedBytes, "cached from its first call");
  }

  @Test
  void eventsPagedOutInOneTaskAreReadBackThroughTheNextTasksStore() {
    BucketState state = claim();
    addCountRule(state.engine(), 60);
    long[] times = new long[300];
    for (int i = 0; i < times.length; i++) {
      times[i] = T0 + i * 10_000L; // 50 minutes: the count's far edge stays at the first event
    }
    evaluate(state, "p1", times);
    GroupWindow window = read(state, GROUP);
    assertEquals(GroupWindow.PAGE + 7, window.decodedCount(), "the far edge's page and the last minute");
    BucketState next = claim();
    assertSame(state, next, "the cache carries over to the next task");
    long[] later = new long[200];
    for (int i = 0; i < later.length; i++) {
      later[i] = T0 + (300 + i) * 10_000L; // the far edge walks through the paged-out events
    }
    evaluate(next, "p1", later);
    GroupWindow walked = read(next, GROUP);
    assertSame(window, walked);
    assertEquals(367, walked.size(), "61 minutes (window and lateness) of events 10 s apart, both ends included");
    assertEquals(walked.size(), walked.events().size());
  }
}
