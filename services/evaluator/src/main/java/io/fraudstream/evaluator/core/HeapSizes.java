package io.fraudstream.evaluator.core;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.List;
import java.util.Map;

/**
 * The heap an object of a cached window takes, as a 64-bit HotSpot JVM with compressed references lays it out
 * (12-byte object headers, 16-byte array headers, 4-byte references, 8-byte alignment; strings of Latin-1
 * characters, one byte each). Estimates for the window cache's budget ({@link GroupWindow#heapBytes}): an object
 * shared with other windows (a string of the transaction every group of it projects) is charged to each of them.
 */
final class HeapSizes {
  private static final int OBJECT_HEADER = 12;
  private static final int ARRAY_HEADER = 16;
  private static final int BIG_DECIMAL = 40;
  private static final int BIG_INTEGER = 40;
  private static final int STRING = 24;
  private static final int BOXED_LONG = 16;
  private static final int OTHER_VALUE = 16;
  /** An ArrayList: size, modCount and its array's reference. */
  private static final int ARRAY_LIST = 24;
  /** A LinkedHashMap: HashMap's fields and the list's head, tail and order. */
  private static final int LINKED_HASH_MAP = 56;
  /** A LinkedHashMap entry: hash, key, value, next, before, after. */
  private static final int LINKED_ENTRY = 40;
  /** The decimal digits a long holds in full: a BigDecimal of more carries a BigInteger. */
  private static final int LONG_DIGITS = 18;

  private HeapSizes() {}

  static long aligned(long bytes) {
    return (bytes + 7) & ~7L;
  }

  /** An object whose own fields take {@code fieldBytes} (references 4 B each, primitives their size). */
  static long object(int fieldBytes) {
    return aligned(OBJECT_HEADER + fieldBytes);
  }

  /**
   * A decimal a window holds apart from its events (a MIN/MAX candidate's value, a running total), taken to fit a
   * long's digits, as amounts do: its digits are not read, so that the charge costs nothing per value.
   */
  static long decimal() {
    return BIG_DECIMAL;
  }

  /** An array of {@code length} references. */
  static long referenceArray(int length) {
    return aligned(ARRAY_HEADER + 4L * length);
  }

  /** An array of {@code length} longs. */
  static long longArray(int length) {
    return ARRAY_HEADER + 8L * length;
  }

  /**
   * A projected value with what it alone holds: a string with its characters, a number with its digits, a JSON array
   * or object (as {@link Json} reads them) with its elements; nothing for the JVM's shared instances ({@code null},
   * booleans, {@link Missing#MISSING}). A container's charge walks it: {@link Json} bounds its depth.
   */
  static long value(Object value) {
    if (value == null || value instanceof Boolean || value == Missing.MISSING) {
      return 0;
    } else if (value instanceof String s) {
      return STRING + aligned(ARRAY_HEADER + s.length());
    } else if (value instanceof BigDecimal d) {
      return number(d);
    } else if (value instanceof BigInteger i) {
      return bigInteger(i.bitLength());
    } else if (value instanceof Long) {
      return BOXED_LONG;
    } else if (value instanceof List<?> list) {
      long bytes = ARRAY_LIST + referenceArray(list.size());
      for (Object item : list) {
        bytes += value(item);
      }
      return bytes;
    } else if (value instanceof Map<?, ?> map) {
      long bytes = LINKED_HASH_MAP + (long) LINKED_ENTRY * map.size();
      if (!map.isEmpty()) {
        int table = 16; // HashMap's default, doubled whenever its entries pass three quarters of it
        while (map.size() > table / 4 * 3 && table < (1 << 30)) {
          table <<= 1;
        }
        bytes += referenceArray(table);
      }
      for (Map.Entry<?, ?> entry : map.entrySet()) {
        bytes += value(entry.getKey()) + value(entry.getValue());
      }
      return bytes;
    }
    return OTHER_VALUE;
  }

  /** A decimal with its unscaled digits (a BigInteger beyond a long's). */
  static long number(BigDecimal number) {
    int digits = number.precision();
    // 3.33 bits a decimal digit
    return digits <= LONG_DIGITS ? BIG_DECIMAL : BIG_DECIMAL + bigInteger((int) (digits * 3.33) + 1);
  }

  private static long bigInteger(int bits) {
    return BIG_INTEGER + aligned(ARRAY_HEADER + 4L * (bits / 32 + 1));
  }
}
