package io.fraudstream.evaluator.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fraudstream.evaluator.core.GroupKeys;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** CacheAdmission: each key group's new groups kept or dropped by the share of its reads that found a group. */
class CacheAdmissionTest {
  private static final List<String> PAYER = List.of("payerId");
  private static final List<String> PAIR = List.of("beneficiaryId", "payerId");

  private static String payer(int id) {
    return GroupKeys.groupKey(PAYER, Map.of("payerId", "p" + id));
  }

  private static String pair(int id) {
    return GroupKeys.groupKey(PAIR, Map.of("beneficiaryId", "b" + id, "payerId", "p" + id));
  }

  /** {@code reads} reads of new groups of the pair key group; the answer to the last. */
  private static boolean newPairs(CacheAdmission admission, int from, int reads) {
    boolean kept = true;
    for (int i = from; i < from + reads; i++) {
      kept = admission.read(pair(i), false);
    }
    return kept;
  }

  @Test
  void newGroupsAreKeptUntilAPeriodOfReadsFoundAlmostNoneExisting() {
    CacheAdmission admission = new CacheAdmission("b0");
    assertTrue(newPairs(admission, 0, CacheAdmission.PERIOD - 1), "before the first period's end");
    assertEquals(0, admission.droppingKeyGroups());
    assertFalse(admission.read(pair(CacheAdmission.PERIOD), false), "decided at the period's last read");
    assertEquals(1, admission.droppingKeyGroups());
  }

  /** Whether a period of {@code existing} reads of an existing group, then new groups, keeps new groups. */
  private static boolean keepsNewAfterAPeriodWith(int existing) {
    CacheAdmission admission = new CacheAdmission("b0");
    for (int i = 0; i < existing; i++) {
      admission.read(pair(0), true);
    }
    return newPairs(admission, 1, CacheAdmission.PERIOD - existing);
  }

  @Test
  void newGroupsAreKeptWhileTheShareOfReadsFindingAGroupIsAtLeastTheThreshold() {
    int threshold = (int) Math.ceil(CacheAdmission.RECURRING_SHARE * CacheAdmission.PERIOD);
    assertTrue(keepsNewAfterAPeriodWith(threshold));
    assertFalse(keepsNewAfterAPeriodWith(threshold - 1));
  }

  @Test
  void keyGroupsAreDecidedApart() {
    CacheAdmission admission = new CacheAdmission("b0");
    for (int i = 0; i < CacheAdmission.PERIOD; i++) {
      admission.read(pair(i), false);
      admission.read(payer(i % 100), i >= 100); // 100 payers, each new once
    }
    assertFalse(admission.read(pair(-1), false), "pairs never recurred");
    assertTrue(admission.read(payer(-1), false), "payers recur");
    assertEquals(1, admission.droppingKeyGroups());
  }

  @Test
  void aDroppingKeyGroupWhoseGroupsStartToRecurKeepsItsNewGroupsAfterThePeriod() {
    CacheAdmission admission = new CacheAdmission("b0");
    assertFalse(newPairs(admission, 0, CacheAdmission.PERIOD));
    int recurring = CacheAdmission.PERIOD / 2; // read back from the store at their second call
    for (int i = 0; i < recurring; i++) {
      assertFalse(admission.read(pair(i), true));
    }
    assertTrue(newPairs(admission, CacheAdmission.PERIOD, CacheAdmission.PERIOD - recurring));
    assertEquals(0, admission.droppingKeyGroups());
  }

  @Test
  void aKeyGroupIsNotTakenForAnotherWhoseNamesItsOwnBegin() {
    CacheAdmission admission = new CacheAdmission("b0");
    List<String> payerAndType = List.of("payerId", "paymentType");
    for (int i = 0; i < CacheAdmission.PERIOD; i++) {
      admission.read(payer(i), false);
    }
    String group = GroupKeys.groupKey(payerAndType, Map.of("payerId", "p1", "paymentType", "CSH"));
    assertTrue(admission.read(group, false), "a key group of its own, still in its first period");
    assertEquals(1, admission.droppingKeyGroups());
  }
}
