package io.fraudstream.evaluator.core;

import java.math.BigDecimal;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;

/**
 * The copy of a transaction a group keeps (port of aggregates.StoredEvent, plus {@code id}).
 *
 * <p>{@code values} are the transaction's values of the group's projected fields, in the group's field order,
 * {@link Missing#MISSING} where absent (JSON null is {@code null}). {@code ruleSeq} is the engine's rule sequence
 * number when the event was stored. {@code id} is the group's insertion counter: among equal event times, events are
 * ordered by id. {@code numbers} and {@code amounts} are derived from {@code values} (see the seven-argument constructor).
 */
public record StoredEvent(
    long id,
    long eventTimeMs,
    long ingestTsMs,
    int partition,
    long offset,
    long ruleSeq,
    List<Object> values,
    List<BigDecimal> numbers,
    List<BigDecimal> amounts) {

  /**
   * An event whose {@code numbers} are its values read as numbers ({@link Decimals#asNumber}) and whose {@code
   * amounts} are those numbers that are amounts ({@link Decimals#isAmount}), null where a value is neither: every
   * rule of the group reads them again and again, so they are derived once, when the event is made.
   */
  public StoredEvent(
      long id, long eventTimeMs, long ingestTsMs, int partition, long offset, long ruleSeq, List<Object> values) {
    this(id, eventTimeMs, ingestTsMs, partition, offset, ruleSeq, values, numbersOf(values));
  }

  private StoredEvent(
      long id,
      long eventTimeMs,
      long ingestTsMs,
      int partition,
      long offset,
      long ruleSeq,
      List<Object> values,
      List<BigDecimal> numbers) {
    this(id, eventTimeMs, ingestTsMs, partition, offset, ruleSeq, values, numbers, amountsOf(numbers));
  }

  private static List<BigDecimal> numbersOf(List<Object> values) {
    BigDecimal[] numbers = new BigDecimal[values.size()];
    for (int i = 0; i < numbers.length; i++) {
      Object value = values.get(i);
      numbers[i] = value == Missing.MISSING ? null : Decimals.asNumber(value);
    }
    return Collections.unmodifiableList(Arrays.asList(numbers));
  }

  private static List<BigDecimal> amountsOf(List<BigDecimal> numbers) {
    BigDecimal[] amounts = new BigDecimal[numbers.size()];
    for (int i = 0; i < amounts.length; i++) {
      BigDecimal number = numbers.get(i);
      amounts[i] = number != null && Decimals.isAmount(number) ? number : null;
    }
    return Collections.unmodifiableList(Arrays.asList(amounts));
  }

  /** This event with other projected values. */
  public StoredEvent withValues(List<Object> newValues) {
    return new StoredEvent(id, eventTimeMs, ingestTsMs, partition, offset, ruleSeq, newValues);
  }
}
