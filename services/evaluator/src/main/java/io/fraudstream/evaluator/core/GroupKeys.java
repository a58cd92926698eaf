package io.fraudstream.evaluator.core;

import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.CRC32;

/**
 * Group names and their buckets.
 *
 * <p>{@link #groupKey} is exactly Python's {@code engine.group_key}: the compact JSON {@code [[names],[values]]},
 * non-ASCII unescaped, object keys sorted; numbers compared by value ({@code 7}, {@code 7.0}, {@code 7E0} are one
 * group, integral decimals written as integers, others normalized) while a number and a string stay different.
 */
public final class GroupKeys {
  private GroupKeys() {}

  /** The group of {@code fields} in {@code keyGroup} (sorted names); null if a grouping field is missing. */
  public static String groupKey(List<String> keyGroup, Map<String, Object> fields) {
    return groupKey(keyPrefix(keyGroup), keyGroup, fields);
  }

  /** What every group key of {@code keyGroup} starts with (its names), for {@link #groupKey(String, List, Map)}. */
  public static String keyPrefix(List<String> keyGroup) {
    StringBuilder out = new StringBuilder();
    out.append('[');
    Json.write(keyGroup, out, true);
    return out.append(',').toString();
  }

  /** {@link #groupKey(List, Map)} given {@code keyPrefix}, the key group's {@link #keyPrefix}. */
  public static String groupKey(String keyPrefix, List<String> keyGroup, Map<String, Object> fields) {
    StringBuilder out = new StringBuilder(keyPrefix.length() + 16 * keyGroup.size() + 4);
    out.append(keyPrefix).append('[');
    for (int i = 0; i < keyGroup.size(); i++) { // indexed: no iterator per group of every transaction
      String name = keyGroup.get(i);
      if (!fields.containsKey(name)) {
        return null;
      }
      if (i > 0) {
        out.append(',');
      }
      Json.write(canonicalKeyValue(fields.get(name)), out, true);
    }
    return out.append("]]").toString();
  }

  private static Object canonicalKeyValue(Object value) {
    if (value instanceof BigDecimal d) {
      BigDecimal normalized = d.signum() == 0 ? BigDecimal.ZERO : d.stripTrailingZeros();
      if (normalized.scale() <= 0 && Decimals.adjusted(normalized) < Decimals.AMOUNT_DIGITS) {
        return normalized.toBigIntegerExact();
      }
      return normalized;
    }
    if (value instanceof List<?> list) {
      List<Object> items = new ArrayList<>(list.size());
      for (Object item : list) {
        items.add(canonicalKeyValue(item));
      }
      return items;
    }
    if (value instanceof Map<?, ?> map) {
      Map<String, Object> items = new LinkedHashMap<>();
      for (Map.Entry<?, ?> entry : map.entrySet()) {
        items.put((String) entry.getKey(), canonicalKeyValue(entry.getValue()));
      }
      return items;
    }
    return value;
  }

  /**
   * The key group (sorted field names) a group key names, read from its names alone: whatever its values hold
   * (a transaction may group by a value nested as deep as {@link Json#MAX_NESTING_DEPTH}, which the key nests two
   * levels deeper, or by a number whose normalized text is longer than {@link Json#MAX_NUMBER_CHARS}), a key this
   * class made is read. IllegalArgumentException if {@code groupKey} does not start with a names array and a comma.
   */
  public static List<String> keyGroupOf(String groupKey) {
    int end = namesEnd(groupKey);
    try {
      List<String> names = new ArrayList<>();
      for (Object name : (List<?>) Json.parse(groupKey.substring(1, end))) {
        names.add((String) name);
      }
      return names;
    } catch (JsonValueException | ClassCastException exc) {
      throw new IllegalArgumentException("not a group key: " + abbreviated(groupKey), exc);
    }
  }

  /** The index just past the names array that opens {@code groupKey} ({@code [[names],[values]]}). */
  private static int namesEnd(String groupKey) {
    if (groupKey.startsWith("[[")) {
      boolean inString = false;
      for (int i = 2; i < groupKey.length(); i++) {
        char c = groupKey.charAt(i);
        if (inString && c == '\\') {
          i++; // the escaped character, a quote included
        } else if (c == '"') {
          inString = !inString;
        } else if (!inString && c == ']') {
          if (i + 1 < groupKey.length() && groupKey.charAt(i + 1) == ',') {
            return i + 1;
          }
          break;
        }
      }
    }
    throw new IllegalArgumentException("not a group key: " + abbreviated(groupKey));
  }

  private static String abbreviated(String text) {
    return text.length() <= 200 ? text : text.substring(0, 200) + "... (" + text.length() + " characters)";
  }

  /** {@code zlib.crc32(utf8(groupKey)) % buckets}, as Python's records.bucket_of. */
  public static int bucketOf(String groupKey, int buckets) {
    CRC32 crc = new CRC32();
    crc.update(groupKey.getBytes(StandardCharsets.UTF_8));
    return (int) (crc.getValue() % buckets);
  }
}
