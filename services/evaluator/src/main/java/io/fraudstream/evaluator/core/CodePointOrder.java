package io.fraudstream.evaluator.core;

import java.util.List;

/**
 * Strings ordered by code point, as Python orders {@code str} (Java's {@link String#compareTo} orders UTF-16 units,
 * which differs above U+FFFF): the order rule ids, field names and key groups take in both cores.
 */
public final class CodePointOrder {
  private CodePointOrder() {}

  /** Python's {@code str} ordering: by code point (differs from {@link String#compareTo} above U+FFFF). */
  public static int compareStrings(String a, String b) {
    int i = 0;
    int j = 0;
    while (i < a.length() && j < b.length()) {
      int ca = a.codePointAt(i);
      int cb = b.codePointAt(j);
      if (ca != cb) {
        return Integer.compare(ca, cb);
      }
      i += Character.charCount(ca);
      j += Character.charCount(cb);
    }
    return Boolean.compare(i < a.length(), j < b.length());
  }

  /** Python's tuple-of-str ordering. */
  public static int compareStringLists(List<String> a, List<String> b) {
    for (int i = 0; i < Math.min(a.size(), b.size()); i++) {
      int c = compareStrings(a.get(i), b.get(i));
      if (c != 0) {
        return c;
      }
    }
    return Integer.compare(a.size(), b.size());
  }
}
