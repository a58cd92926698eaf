package io.fraudstream.evaluator.spark;

import org.apache.spark.unsafe.hash.Murmur3_x86_32;

/**
 * The grouping keys of the evaluation's buckets, one state partition each.
 *
 * <p>{@code transformWithState} places a key in the state partition Spark's hash partitioning gives it:
 * pmod(Murmur3(key, seed 42), partitions). Keyed by the bucket number itself, buckets collide (with 2 partitions, 0
 * and 1 both land in partition 1, so one task evaluated both buckets in turn and the other none). Contract: with as
 * many buckets as state partitions, {@link #key} gives bucket b a key in partition b, and {@link #bucketOf} maps that
 * key back to b.
 */
final class BucketKeys {
  /** The seed of Spark's Murmur3Hash expression, which HashPartitioning applies to the grouping key. */
  private static final int SPARK_HASH_SEED = 42;

  private BucketKeys() {}

  /** The state partition of {@code key} among {@code partitions}, as Spark's hash partitioning places it. */
  static int bucketOf(long key, int partitions) {
    return Math.floorMod(Murmur3_x86_32.hashLong(key, SPARK_HASH_SEED), partitions);
  }

  /** The smallest non-negative key in state partition {@code bucket} of {@code buckets}. */
  static long key(int bucket, int buckets) {
    if (bucket < 0 || bucket >= buckets) {
      throw new IllegalArgumentException("bucket " + bucket + " is not one of 0.." + (buckets - 1));
    }
    long key = 0;
    while (bucketOf(key, buckets) != bucket) {
      key++;
    }
    return key;
  }

  /** {@link #key} of every bucket, indexed by bucket. */
  static long[] keys(int buckets) {
    long[] keys = new long[buckets];
    for (int bucket = 0; bucket < buckets; bucket++) {
      keys[bucket] = key(bucket, buckets);
    }
    return keys;
  }
}
