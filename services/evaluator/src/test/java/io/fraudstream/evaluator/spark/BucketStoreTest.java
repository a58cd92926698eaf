package io.fraudstream.evaluator.spark;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.fraudstream.evaluator.core.GroupRows;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** BucketStore's views over memory maps: what shares a state variable never sees or overwrites another's entries. */
class BucketStoreTest {
  private final MemoryMapState<String, byte[]> heads = new MemoryMapState<>();
  private final MemoryMapState<String, byte[]> rows = new MemoryMapState<>();
  private final MemoryMapState<Long, byte[]> pending = new MemoryMapState<>();
  private final BucketStore store = new BucketStore(heads, rows, pending);

  private static byte[] bytes(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }

  @Test
  void anEmptyStoreHoldsNothing() {
    assertEquals(0L, store.generation());
    assertNull(store.engine());
    assertNull(store.rulesOffset(0));
    assertEquals(Map.of(), store.held().readAll());
    assertEquals(Map.of(), store.awaitingRules().readAll());
  }

  @Test
  void eachKindOfRowReadsBackWhatWasWrittenAndOnlyThat() {
    store.setGeneration(-42L);
    store.setEngine(bytes("rules"));
    store.setRulesOffset(0, 7L);
    store.setRulesOffset(12, Long.MAX_VALUE);
    GroupRows.Table events = store.tagged(BucketStore.EVENT_TAG);
    // Keys that equal another kind's tag or row key once tagged must not collide with it.
    store.setRulesOffset(3, 1L);
    rows.updateValue(BucketStore.EVENT_TAG + "g", bytes("event g"));
    events.put("r", bytes("event r"));
    assertEquals(-42L, store.generation());
    assertArrayEquals(bytes("rules"), store.engine());
    assertEquals(7L, store.rulesOffset(0));
    assertEquals(Long.MAX_VALUE, store.rulesOffset(12));
    assertNull(store.rulesOffset(1));
    assertArrayEquals(bytes("event r"), events.get("r"));
    assertArrayEquals(bytes("event g"), events.get("g"));
    assertEquals(heads.entries, Map.of(), "nothing but group heads goes in heads");
  }

  @Test
  void theTwoHoldersOfPendingRecordsDoNotSeeEachOther() {
    InputRecord a = Records.tx(0, 1, 10, "a");
    InputRecord b = Records.tx(0, 2, 20, "b");
    InputRecord c = Records.rule(1, 3, 30, "ns/c", "c");
    PendingRecords held = store.held();
    PendingRecords awaiting = store.awaitingRules();
    held.put(0, a);
    held.put(1, b);
    awaiting.put(0, c);
    assertEquals(List.of(0L, 1L), List.copyOf(held.readAll().keySet()));
    List<String> values =
        held.readAll().values().stream().map(r -> new String(r.value(), StandardCharsets.UTF_8)).toList();
    assertEquals(List.of("a", "b"), values);
    assertEquals(List.of(0L), List.copyOf(awaiting.readAll().keySet()));
    assertEquals(c.offset(), awaiting.readAll().get(0L).offset());
    held.remove(0);
    assertEquals(List.of(1L), List.copyOf(held.readAll().keySet()));
    assertEquals(1, awaiting.readAll().size(), "the other half keeps its record");
    awaiting.remove(0);
    assertEquals(Map.of(), awaiting.readAll());
    assertEquals(List.of(1L), List.copyOf(pending.entries.keySet()), "one entry left, in the reorder wait's half");
    assertThrows(IllegalArgumentException.class, () -> held.put(-1, a));
  }
}
