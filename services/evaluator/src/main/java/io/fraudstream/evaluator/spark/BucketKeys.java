package io.fraudstream.evaluator.spark;

import org.apache.spark.unsafe.hash.Murmur3_x86_32;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * The grouping keys of the evaluation's buckets, one state partition each.
 *
 * <p>{@code transformWithState} places a key in the state partition Spark's hash partitioning gives it:
 * pmod(Murmur3(key, seed 42), partitions). Keyed by the bucket number itself, buckets collide (with 2 partitions, 0
 * and 1 both land in partition 1, so one task evaluated both buckets in turn and the other none). Contract: with as
 * many buckets as state partitions, {@link #key} gives bucket b a key in partition b, and {@link #bucketOf} maps that
 * key back to b. The keys are strings, {@code "<bucket>/<n>"}: the key's type is part of the state's schema, and
 * each change of the state's layout changed it (Int, then Long, now String), so that Spark refuses a checkpoint of an
 * earlier layout at start instead of reading it as this one.
 */
final class BucketKeys {
  /** The seed of Spark's Murmur3Hash expression, which HashPartitioning applies to the grouping key. */
  private static final int SPARK_HASH_SEED = 42;

  private BucketKeys() {}

  /** The state partition of {@code key} among {@code partitions}, as Spark's hash partitioning places it. */
  static int bucketOf(String key, int partitions) {
    UTF8String utf8 = UTF8String.fromString(key);
    int hash =
        Murmur3_x86_32.hashUnsafeBytes(utf8.getBaseObject(), utf8.getBaseOffset(), utf8.numBytes(), SPARK_HASH_SEED);
    return Math.floorMod(hash, partitions);
  }

  /** Bucket {@code bucket}'s key among {@code buckets}: {@code "<bucket>/<n>"} with the smallest n that lands in it. */
  static String key(int bucket, int buckets) {
    if (bucket < 0 || bucket >= buckets) {
      throw new IllegalArgumentException("bucket " + bucket + " is not one of 0.." + (buckets - 1));
    }
    for (long n = 0; ; n++) {
      String key = bucket + "/" + n;
      if (bucketOf(key, buckets) == bucket) {
        return key;
      }
    }
  }

  /** {@link #key} of every bucket, indexed by bucket. */
  static String[] keys(int buckets) {
    String[] keys = new String[buckets];
    for (int bucket = 0; bucket < buckets; bucket++) {
      keys[bucket] = key(bucket, buckets);
    }
    return keys;
  }
}
