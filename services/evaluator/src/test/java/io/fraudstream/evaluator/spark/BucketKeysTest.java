package io.fraudstream.evaluator.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.catalyst.plans.physical.HashPartitioning;
import org.apache.spark.sql.types.DataTypes;
import org.junit.jupiter.api.Test;
import scala.jdk.javaapi.CollectionConverters;

/** BucketKeys against Spark's own hash partitioning, which places transformWithState's keys in state partitions. */
class BucketKeysTest {
  /** The state partition Spark's HashPartitioning gives a String grouping key. */
  private static int sparkPartition(String key, int partitions) {
    return sparkPartition(Literal.create(key, DataTypes.StringType), partitions);
  }

  private static int sparkPartition(Literal key, int partitions) {
    List<Expression> keyColumns = List.of(key);
    HashPartitioning partitioning =
        new HashPartitioning(CollectionConverters.asScala(keyColumns).toSeq(), partitions);
    return (Integer) partitioning.partitionIdExpression().eval(InternalRow.empty());
  }

  @Test
  void everyBucketGetsAStatePartitionOfItsOwn() {
    for (int buckets = 1; buckets <= 64; buckets++) {
      String[] keys = BucketKeys.keys(buckets);
      Set<Integer> partitions = new HashSet<>();
      for (int bucket = 0; bucket < buckets; bucket++) {
        assertEquals(bucket, sparkPartition(keys[bucket], buckets), buckets + " buckets: bucket " + bucket);
        assertEquals(bucket, BucketKeys.bucketOf(keys[bucket], buckets));
        partitions.add(sparkPartition(keys[bucket], buckets));
      }
      assertEquals(buckets, partitions.size(), buckets + " buckets");
    }
  }

  @Test
  void bucketOfIsSparksPartitionForAnyKey() {
    for (String key : new String[] {"", "0/0", "1/0", "7/12", "a longer key, ünïcödé", "\u0000"}) {
      for (int partitions : new int[] {1, 2, 3, 5, 8, 200}) {
        assertEquals(sparkPartition(key, partitions), BucketKeys.bucketOf(key, partitions), key + " of " + partitions);
      }
    }
  }

  @Test
  void theBucketNumbersThemselvesWouldShareAPartition() {
    // Why the keys exist: keyed by their numbers (Int 0 and 1), both buckets of 2 land in partition 1.
    assertEquals(1, sparkPartition(Literal.create(0, DataTypes.IntegerType), 2));
    assertEquals(1, sparkPartition(Literal.create(1, DataTypes.IntegerType), 2));
  }

  @Test
  void aBucketOutsideTheBucketsIsRefused() {
    assertThrows(IllegalArgumentException.class, () -> BucketKeys.key(2, 2));
    assertThrows(IllegalArgumentException.class, () -> BucketKeys.key(-1, 2));
  }
}
