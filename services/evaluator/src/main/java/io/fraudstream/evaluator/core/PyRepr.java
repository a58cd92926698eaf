package io.fraudstream.evaluator.core;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.List;
import java.util.Map;

/** Python's {@code repr} of JSON values and Python's string ordering, for texts that must match the Python core. */
public final class PyRepr {
  private PyRepr() {}

  /** {@code repr(value)}: str quoting/escaping, None, True/False, ints, {@code Decimal('0.2')}, lists, dicts. */
  public static String repr(Object value) {
    StringBuilder out = new StringBuilder();
    append(value, out);
    return out.toString();
  }

  /** Python's {@code type(value).__name__} for a JSON value. */
  public static String typeName(Object value) {
    if (value == null) {
      return "NoneType";
    } else if (value instanceof Boolean) {
      return "bool";
    } else if (value instanceof String) {
      return "str";
    } else if (value instanceof BigInteger || value instanceof Long || value instanceof Integer) {
      return "int";
    } else if (value instanceof BigDecimal) {
      return "Decimal";
    } else if (value instanceof List) {
      return "list";
    } else if (value instanceof Map) {
      return "dict";
    }
    return value.getClass().getSimpleName();
  }

  private static void append(Object value, StringBuilder out) {
    if (value == null) {
      out.append("None");
    } else if (value instanceof Boolean b) {
      out.append(b ? "True" : "False");
    } else if (value instanceof String s) {
      appendString(s, out);
    } else if (value instanceof BigInteger || value instanceof Long || value instanceof Integer) {
      out.append(value);
    } else if (value instanceof BigDecimal d) {
      out.append("Decimal('").append(d.toString()).append("')");
    } else if (value instanceof List<?> list) {
      out.append('[');
      for (int i = 0; i < list.size(); i++) {
        if (i > 0) {
          out.append(", ");
        }
        append(list.get(i), out);
      }
      out.append(']');
    } else if (value instanceof Map<?, ?> map) {
      out.append('{');
      boolean first = true;
      for (Map.Entry<?, ?> entry : map.entrySet()) {
        if (!first) {
          out.append(", ");
        }
        first = false;
        append(entry.getKey(), out);
        out.append(": ");
        append(entry.getValue(), out);
      }
      out.append('}');
    } else if (value instanceof Missing) {
      out.append("<Missing.MISSING: 'MISSING'>");
    } else {
      out.append(value);
    }
  }

  private static void appendString(String s, StringBuilder out) {
    char quote = s.indexOf('\'') >= 0 && s.indexOf('"') < 0 ? '"' : '\'';
    out.append(quote);
    for (int i = 0; i < s.length(); ) {
      int cp = s.codePointAt(i);
      i += Character.charCount(cp);
      if (cp == quote || cp == '\\') {
        out.append('\\').appendCodePoint(cp);
      } else if (cp == '\t') {
        out.append("\\t");
      } else if (cp == '\n') {
        out.append("\\n");
      } else if (cp == '\r') {
        out.append("\\r");
      } else if (cp < 0x20 || cp == 0x7f) {
        out.append(String.format("\\x%02x", cp));
      } else if (cp < 0x7f) {
        out.appendCodePoint(cp);
      } else if (isPrintable(cp)) {
        out.appendCodePoint(cp);
      } else if (cp <= 0xff) {
        out.append(String.format("\\x%02x", cp));
      } else if (cp <= 0xffff) {
        out.append(String.format("\\u%04x", cp));
      } else {
        out.append(String.format("\\U%08x", cp));
      }
    }
    out.append(quote);
  }

  /** Python's {@code str.isprintable} for one code point (Java's Unicode tables, close to Python's). */
  private static boolean isPrintable(int cp) {
    switch (Character.getType(cp)) {
      case Character.CONTROL:
      case Character.FORMAT:
      case Character.SURROGATE:
      case Character.PRIVATE_USE:
      case Character.UNASSIGNED:
      case Character.LINE_SEPARATOR:
      case Character.PARAGRAPH_SEPARATOR:
        return false;
      case Character.SPACE_SEPARATOR:
        return cp == ' ';
      default:
        return true;
    }
  }

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
