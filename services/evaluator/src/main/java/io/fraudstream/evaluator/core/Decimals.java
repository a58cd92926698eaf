package io.fraudstream.evaluator.core;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.math.MathContext;
import java.math.RoundingMode;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Pattern;

/**
 * Exact decimals, the numbers the core accepts, and their canonical text (port of decimals).
 *
 * <p>Sums, differences and products are exact (BigDecimal without a MathContext). {@link #QUOTIENT} (34 significant
 * digits, HALF_EVEN) is the only rounding, used to report an average. An <em>amount</em> is a finite decimal with at
 * most {@link #AMOUNT_DIGITS} digits before and after the point (after removing trailing zeros). {@link #asNumber}
 * is the lenient reading used by filters: an integer (not a boolean), a decimal, or a string that is a plain ASCII
 * decimal literal ({@code -12}, {@code 0.10}, {@code 1e3}) of at most {@link Json#MAX_NUMBER_CHARS} characters.
 */
public final class Decimals {
  public static final int AMOUNT_DIGITS = 100;
  public static final MathContext QUOTIENT = new MathContext(34, RoundingMode.HALF_EVEN);

  private static final Pattern DECIMAL_TEXT =
      Pattern.compile("[+-]?(?:[0-9]+(?:\\.[0-9]*)?|\\.[0-9]+)(?:[eE][+-]?[0-9]{1,9})?");

  // Every stored event's amount text is read by each rule of its key group, again and again; BigDecimals are
  // immutable, so the parsed values are shared (as Python's lru_cache on parse_decimal_text does).
  private static final int PARSED_CACHE_LIMIT = 1 << 16;
  private static final Optional<BigDecimal> NOT_DECIMAL = Optional.empty();
  private static final Map<String, Optional<BigDecimal>> PARSED = new ConcurrentHashMap<>();

  private Decimals() {}

  /**
   * The decimal a plain decimal literal denotes, or null if {@code text} is not one or is longer than a JSON number
   * literal may be ({@link Json#MAX_NUMBER_CHARS}): a longer text is a string, never parsed or cached.
   */
  public static BigDecimal parseDecimalText(String text) {
    if (text.isEmpty() || text.length() > Json.MAX_NUMBER_CHARS || "0123456789+-.".indexOf(text.charAt(0)) < 0) {
      return null; // the common non-number (a payment type, an id): no regex, no cache entry
    }
    Optional<BigDecimal> parsed = PARSED.get(text);
    if (parsed == null) {
      parsed = NOT_DECIMAL;
      if (DECIMAL_TEXT.matcher(text).matches()) {
        try {
          parsed = Optional.of(new BigDecimal(text));
        } catch (NumberFormatException exc) {
          parsed = NOT_DECIMAL;
        }
      }
      if (PARSED.size() >= PARSED_CACHE_LIMIT) {
        PARSED.clear();
      }
      PARSED.put(text, parsed);
    }
    return parsed.orElse(null);
  }

  /** {@code value} read as a number (integer, decimal or decimal-literal string), else null; booleans are not. */
  public static BigDecimal asNumber(Object value) {
    if (value instanceof BigInteger i) {
      return new BigDecimal(i);
    } else if (value instanceof BigDecimal d) {
      return d;
    } else if (value instanceof Long l) {
      return BigDecimal.valueOf(l);
    } else if (value instanceof String s) {
      return parseDecimalText(s);
    }
    return null;
  }

  /** Python's {@code Decimal.adjusted()}: the exponent of the most significant digit (0 for zero). */
  public static long adjusted(BigDecimal value) {
    return (long) value.precision() - value.scale() - 1;
  }

  /** Whether a number is within the amount bounds (at most AMOUNT_DIGITS digits each side of the point). */
  public static boolean isAmount(BigDecimal value) {
    if (value.signum() == 0) {
      return true;
    }
    if (adjusted(value) >= AMOUNT_DIGITS) {
      return false;
    }
    if (value.scale() <= AMOUNT_DIGITS) {
      return true;
    }
    return value.stripTrailingZeros().scale() <= AMOUNT_DIGITS;
  }

  /** {@code value} read as an amount, else null. */
  public static BigDecimal asAmount(Object value) {
    BigDecimal number = asNumber(value);
    return number == null || !isAmount(number) ? null : number;
  }

  /** Whether a decimal has an integral value. */
  public static boolean isIntegral(BigDecimal value) {
    return value.signum() == 0 || value.stripTrailingZeros().scale() <= 0;
  }

  /**
   * The one text for a decimal's value: no trailing zeros, no exponent, "0" for any zero ({@code 200000.00} ->
   * "200000", {@code 0.10} -> "0.1"); values beyond the amount bounds fall back to scientific notation.
   */
  public static String canonical(BigDecimal value) {
    if (value.signum() == 0) {
      return "0";
    }
    BigDecimal normalized = value.stripTrailingZeros();
    if (normalized.scale() <= AMOUNT_DIGITS && adjusted(normalized) < AMOUNT_DIGITS) {
      return normalized.toPlainString();
    }
    return normalized.toString();
  }

  /** The average {@code total / count} as reported: 34 significant digits, HALF_EVEN. */
  public static BigDecimal average(BigDecimal total, long count) {
    return total.divide(BigDecimal.valueOf(count), QUOTIENT);
  }
}
