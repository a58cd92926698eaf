package io.fraudstream.evaluator.spark;

import io.fraudstream.evaluator.core.GroupKeys;
import io.fraudstream.evaluator.core.KeyGroupTable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Which new groups a bucket's cache keeps beyond the call that created them, decided per key group from the reads
 * the bucket observes.
 *
 * <p>Contract: {@link #read} is told of every read of a group's window, and whether the group existed (cached or
 * stored) or is new. For a new group it answers whether the cache may keep it after the call; if not, the group is
 * written and dropped, and read back from the store if it recurs. A key group's new groups are kept until {@link
 * #PERIOD} of its reads have been observed; from then on, each period's share of reads that found an existing group
 * decides for the next period: under {@link #RECURRING_SHARE}, its new groups are dropped after their call.
 *
 * <p>Why: a key group whose groups are nearly all seen once (a pair of two large id spaces, as the flink-demo
 * profile's payee and beneficiary) filled the cache with groups that the budget pushed out minutes later, after G1
 * had promoted them, so the cache's churn became old-generation garbage. Dropping the new groups of every key group
 * (tried in e255125) made the groups of recurring key groups pay a store read at their second call instead.
 */
final class CacheAdmission {
  /** The reads of a key group between two decisions. */
  static final int PERIOD = 8_192;

  /** The least share of a period's reads that must find an existing group for new groups to be kept. */
  static final double RECURRING_SHARE = 1.0 / 64;

  /** Key groups observed beyond this many (rule churn) start the observation over. */
  private static final int MAX_KEY_GROUPS = 256;

  private static final Logger LOG = LoggerFactory.getLogger(CacheAdmission.class);

  /** One key group's observation: the prefix its group keys start with, the period's counts, the decision. */
  private static final class Observed {
    final String prefix;
    int reads;
    int recurring;
    boolean keepsNew = true;

    Observed(String prefix) {
      this.prefix = prefix;
    }
  }

  private final String bucket;
  private final KeyGroupTable<Observed> observed =
      new KeyGroupTable<>(MAX_KEY_GROUPS, keyGroup -> new Observed(GroupKeys.keyPrefix(keyGroup)));

  /** {@code bucket} names the bucket in the log line of a changed decision. */
  CacheAdmission(String bucket) {
    this.bucket = bucket;
  }

  /**
   * Observes a read of {@code groupKey}'s window, which found the group ({@code existed}) or not; returns whether a
   * new group of its key group may stay cached after its call.
   */
  boolean read(String groupKey, boolean existed) {
    Observed keyGroup = observed.get(groupKey);
    keyGroup.reads++;
    if (existed) {
      keyGroup.recurring++;
    }
    if (keyGroup.reads == PERIOD) {
      boolean keepsNew = keyGroup.recurring >= RECURRING_SHARE * PERIOD;
      if (keepsNew != keyGroup.keepsNew) {
        LOG.info(
            "cache of {}: new groups of {} now {} ({} of the last {} reads found an existing group)",
            bucket,
            keyGroup.prefix,
            keepsNew ? "kept" : "dropped after their call",
            keyGroup.recurring,
            PERIOD);
      }
      keyGroup.keepsNew = keepsNew;
      keyGroup.reads = 0;
      keyGroup.recurring = 0;
    }
    return keyGroup.keepsNew;
  }

  /** How many key groups' new groups are dropped after their call now. */
  int droppingKeyGroups() {
    int dropping = 0;
    for (Observed keyGroup : observed.values()) {
      dropping += keyGroup.keepsNew ? 0 : 1;
    }
    return dropping;
  }
}
