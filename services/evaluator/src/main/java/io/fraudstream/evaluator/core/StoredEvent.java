package io.fraudstream.evaluator.core;

import java.math.BigDecimal;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Objects;

/**
 * The copy of a transaction a group keeps (port of aggregates.StoredEvent, plus {@code id}). Immutable; equal when
 * every component and value is.
 *
 * <p>{@link #values()} are the transaction's values of the group's projected fields, in the group's field order,
 * {@link Missing#MISSING} where absent (JSON null is {@code null}). {@code ruleSeq} is the engine's rule sequence
 * number when the event was stored. {@code id} is the group's insertion counter: among equal event times, events are
 * ordered by id. {@link #number} and {@link #amount} are derived from the values, once, when the event is made: every
 * rule of the group reads them again and again.
 *
 * <p>A cache holds many of these for long (a decoded event is most of a cached window's heap, and each one a young
 * collection finds alive is copied), so an event is a few flat arrays and no list objects.
 */
public final class StoredEvent {
  private static final int SHALLOW_BYTES = 72;
  private final long id;
  private final long eventTimeMs;
  private final long ingestTsMs;
  private final int partition;
  private final long offset;
  private final long ruleSeq;
  private final Object[] values;
  /** The values read as numbers ({@link Decimals#asNumber}), null where one is not; null when none is. */
  private final BigDecimal[] numbers;
  /** Those numbers that are amounts ({@link Decimals#isAmount}): {@link #numbers} itself when all of them are. */
  private final BigDecimal[] amounts;
  /** What the event alone holds on the heap (see {@link #heapBytes}). */
  private final int heapBytes;

  /** An event holding a copy of {@code values}. */
  public StoredEvent(
      long id, long eventTimeMs, long ingestTsMs, int partition, long offset, long ruleSeq, List<Object> values) {
    this(id, eventTimeMs, ingestTsMs, partition, offset, ruleSeq, values.toArray(), null, null);
  }

  /** An event that owns {@code values}: the caller must not change the array afterwards. */
  static StoredEvent owning(
      long id, long eventTimeMs, long ingestTsMs, int partition, long offset, long ruleSeq, Object[] values) {
    return new StoredEvent(id, eventTimeMs, ingestTsMs, partition, offset, ruleSeq, values, null, null);
  }

  /**
   * An event that owns {@code values}, sharing {@code shared}'s strings ({@link #sharing}): the caller must not
   * change the array afterwards, whose equal strings are replaced by {@code shared}'s.
   */
  static StoredEvent owning(
      long id, long eventTimeMs, long ingestTsMs, int partition, long offset, long ruleSeq, Object[] values,
      Object[] shared) {
    return new StoredEvent(id, eventTimeMs, ingestTsMs, partition, offset, ruleSeq, values, shared, null);
  }

  /**
   * With {@code sameValues}, when not null, an event whose values are equal to {@code values}: its numbers and
   * amounts are taken rather than read again.
   */
  private StoredEvent(
      long id, long eventTimeMs, long ingestTsMs, int partition, long offset, long ruleSeq, Object[] values,
      Object[] shared, StoredEvent sameValues) {
    this.id = id;
    this.eventTimeMs = eventTimeMs;
    this.ingestTsMs = ingestTsMs;
    this.partition = partition;
    this.offset = offset;
    this.ruleSeq = ruleSeq;
    if (shared != null) {
      for (int i = 0; i < values.length; i++) {
        if (sharable(values, shared, i)) {
          values[i] = shared[i];
        }
      }
    }
    this.values = values;
    this.numbers = sameValues != null ? sameValues.numbers : numbersOf(values);
    this.amounts = sameValues != null ? sameValues.amounts : amountsOf(numbers);
    this.heapBytes = (int) Math.min(Integer.MAX_VALUE, heapBytesOf(values, numbers, amounts, shared));
  }

  /** Whether {@code values[i]} is a string equal to {@code shared[i]} and not the same instance. */
  private static boolean sharable(Object[] values, Object[] shared, int i) {
    return i < shared.length
        && shared[i] != null
        && values[i] != shared[i]
        && values[i] instanceof String
        && values[i].equals(shared[i]);
  }

  /**
   * This event with each string value equal to {@code shared}'s at the same position replaced by {@code shared}'s
   * (this event itself when there is none): the event holds those by reference, and its {@link #heapBytes} leaves
   * them to whoever charges {@code shared}. Equal to this event.
   */
  StoredEvent sharing(Object[] shared) {
    for (int i = 0; i < values.length; i++) {
      if (sharable(values, shared, i)) {
        return new StoredEvent(
            id, eventTimeMs, ingestTsMs, partition, offset, ruleSeq, values.clone(), shared, this);
      }
    }
    return this;
  }

  /**
   * The object (header, five longs, two ints, three references) and everything it refers to (HeapSizes) but the
   * values it shares with {@code shared} (by identity).
   */
  private static long heapBytesOf(Object[] values, BigDecimal[] numbers, BigDecimal[] amounts, Object[] shared) {
    long bytes = SHALLOW_BYTES + HeapSizes.referenceArray(values.length);
    for (int i = 0; i < values.length; i++) {
      if (shared == null || i >= shared.length || values[i] != shared[i]) {
        bytes += HeapSizes.value(values[i]);
      }
      if (numbers != null && numbers[i] != null && numbers[i] != values[i]) {
        bytes += HeapSizes.number(numbers[i]); // read from a string or a long
      }
    }
    if (numbers != null) {
      bytes += HeapSizes.referenceArray(numbers.length);
    }
    if (amounts != null && amounts != numbers) {
      bytes += HeapSizes.referenceArray(amounts.length);
    }
    return bytes;
  }

  private static BigDecimal[] numbersOf(Object[] values) {
    BigDecimal[] numbers = null;
    for (int i = 0; i < values.length; i++) {
      BigDecimal number = values[i] == Missing.MISSING ? null : Decimals.asNumber(values[i]);
      if (number != null) {
        if (numbers == null) {
          numbers = new BigDecimal[values.length];
        }
        numbers[i] = number;
      }
    }
    return numbers;
  }

  private static BigDecimal[] amountsOf(BigDecimal[] numbers) {
    if (numbers == null) {
      return null;
    }
    BigDecimal[] amounts = numbers;
    for (int i = 0; i < numbers.length; i++) {
      if (numbers[i] != null && !Decimals.isAmount(numbers[i])) {
        if (amounts == numbers) {
          amounts = numbers.clone();
        }
        amounts[i] = null;
      }
    }
    return amounts;
  }

  public long id() {
    return id;
  }

  public long eventTimeMs() {
    return eventTimeMs;
  }

  public long ingestTsMs() {
    return ingestTsMs;
  }

  public int partition() {
    return partition;
  }

  public long offset() {
    return offset;
  }

  public long ruleSeq() {
    return ruleSeq;
  }

  /**
   * The heap this event holds with its values, numbers and arrays, by {@link HeapSizes}' layout: what dropping its
   * decoded form from a cached window frees, unless another window shares its values.
   */
  public long heapBytes() {
    return heapBytes;
  }

  /** How many projected values the event holds. */
  public int size() {
    return values.length;
  }

  /** The projected value at {@code position}. */
  public Object value(int position) {
    return values[position];
  }

  /** The value at {@code position} read as a number, or null if it is none. */
  public BigDecimal number(int position) {
    Objects.checkIndex(position, values.length);
    return numbers == null ? null : numbers[position];
  }

  /** The value at {@code position} read as an amount, or null if it is none. */
  public BigDecimal amount(int position) {
    Objects.checkIndex(position, values.length);
    return amounts == null ? null : amounts[position];
  }

  /** The projected values, as an unmodifiable view. */
  public List<Object> values() {
    return Collections.unmodifiableList(Arrays.asList(values));
  }

  /**
   * This event with other projected values, which it owns (the caller must not change the array afterwards), sharing
   * {@code shared}'s strings as {@link #sharing} does; {@code shared} may be null.
   */
  StoredEvent withValues(Object[] newValues, Object[] shared) {
    return new StoredEvent(id, eventTimeMs, ingestTsMs, partition, offset, ruleSeq, newValues, shared, null);
  }

  @Override
  public boolean equals(Object other) {
    return other instanceof StoredEvent that
        && id == that.id
        && eventTimeMs == that.eventTimeMs
        && ingestTsMs == that.ingestTsMs
        && partition == that.partition
        && offset == that.offset
        && ruleSeq == that.ruleSeq
        && Arrays.equals(values, that.values);
  }

  @Override
  public int hashCode() {
    return Objects.hash(id, eventTimeMs, ingestTsMs, partition, offset, ruleSeq, Arrays.hashCode(values));
  }

  @Override
  public String toString() {
    return "StoredEvent[id=%d, eventTimeMs=%d, ingestTsMs=%d, partition=%d, offset=%d, ruleSeq=%d, values=%s]"
        .formatted(id, eventTimeMs, ingestTsMs, partition, offset, ruleSeq, Arrays.toString(values));
  }
}
