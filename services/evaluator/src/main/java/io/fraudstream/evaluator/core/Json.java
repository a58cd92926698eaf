package io.fraudstream.evaluator.core;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadConstraints;
import java.io.IOException;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * JSON text to Java values and back with numbers kept exact (port of json_values).
 *
 * <p>Values: JSON null is {@code null}; booleans {@link Boolean}; strings {@link String}; integers {@link BigInteger};
 * every other number a {@link BigDecimal} holding exactly the digits written ({@code 0.10} keeps its scale); arrays
 * {@link List}; objects {@link LinkedHashMap} in first-appearance order, a duplicate key keeping its last value (as
 * Python's json). NaN/Infinity, trailing tokens and invalid UTF-8 are refused.
 */
public final class Json {
  private static final JsonFactory FACTORY =
      JsonFactory.builder()
          .streamReadConstraints(
              StreamReadConstraints.builder()
                  .maxNumberLength(1_000_000)
                  .maxNestingDepth(1000)
                  .maxStringLength(Integer.MAX_VALUE)
                  .build())
          .build();

  private Json() {}

  /** Parse UTF-8 JSON bytes (strictly decoded). */
  public static Object parse(byte[] data) throws JsonValueException {
    String text;
    try {
      text =
          StandardCharsets.UTF_8
              .newDecoder()
              .onMalformedInput(CodingErrorAction.REPORT)
              .onUnmappableCharacter(CodingErrorAction.REPORT)
              .decode(ByteBuffer.wrap(data))
              .toString();
    } catch (CharacterCodingException exc) {
      throw new JsonValueException("'utf-8' codec can't decode bytes: " + exc.getMessage(), exc);
    }
    return parse(text);
  }

  /** Parse JSON text. */
  public static Object parse(String text) throws JsonValueException {
    try (JsonParser parser = FACTORY.createParser(text)) {
      JsonToken first = parser.nextToken();
      if (first == null) {
        throw new JsonValueException("Expecting value: line 1 column 1 (char 0)", null);
      }
      Object value = read(parser, first);
      if (parser.nextToken() != null) {
        throw new JsonValueException("Extra data after the JSON value", null);
      }
      return value;
    } catch (IOException | RuntimeException exc) {
      String message = exc.getMessage();
      throw new JsonValueException(
          message == null ? exc.getClass().getSimpleName() : message.lines().findFirst().orElse(message), exc);
    }
  }

  private static Object read(JsonParser parser, JsonToken token) throws IOException {
    switch (token) {
      case START_OBJECT:
        {
          Map<String, Object> map = new LinkedHashMap<>();
          for (JsonToken next = parser.nextToken(); next != JsonToken.END_OBJECT; next = parser.nextToken()) {
            String name = parser.currentName();
            map.put(name, read(parser, parser.nextToken()));
          }
          return map;
        }
      case START_ARRAY:
        {
          List<Object> list = new ArrayList<>();
          for (JsonToken next = parser.nextToken(); next != JsonToken.END_ARRAY; next = parser.nextToken()) {
            list.add(read(parser, next));
          }
          return list;
        }
      case VALUE_STRING:
        return parser.getText();
      case VALUE_NUMBER_INT:
        return parser.getBigIntegerValue();
      case VALUE_NUMBER_FLOAT:
        return parser.getDecimalValue();
      case VALUE_TRUE:
        return Boolean.TRUE;
      case VALUE_FALSE:
        return Boolean.FALSE;
      case VALUE_NULL:
        return null;
      default:
        throw new IOException("unexpected JSON token " + token);
    }
  }

  /** Compact JSON of a value (see the class comment for the types); strings not ASCII-escaped, map order kept. */
  public static String write(Object value) {
    StringBuilder out = new StringBuilder();
    write(value, out, false);
    return out.toString();
  }

  /** Compact JSON with object keys sorted by code point, as Python's {@code sort_keys=True}. */
  public static String writeSorted(Object value) {
    StringBuilder out = new StringBuilder();
    write(value, out, true);
    return out.toString();
  }

  /**
   * Append the JSON of a value. A BigDecimal is written with the digits it holds (Python's {@code str(Decimal)}),
   * a {@link RawJson} as its text.
   */
  public static void write(Object value, StringBuilder out, boolean sortKeys) {
    if (value == null) {
      out.append("null");
    } else if (value instanceof Boolean b) {
      out.append(b ? "true" : "false");
    } else if (value instanceof String s) {
      quote(s, false, out);
    } else if (value instanceof BigInteger || value instanceof Long || value instanceof Integer) {
      out.append(value);
    } else if (value instanceof BigDecimal d) {
      out.append(d.toString());
    } else if (value instanceof RawJson raw) {
      out.append(raw.text());
    } else if (value instanceof Map<?, ?> map) {
      Collection<? extends Map.Entry<?, ?>> entries = map.entrySet();
      if (sortKeys) {
        List<Map.Entry<?, ?>> sorted = new ArrayList<>(entries);
        sorted.sort((a, b) -> PyRepr.compareStrings((String) a.getKey(), (String) b.getKey()));
        entries = sorted;
      }
      out.append('{');
      boolean first = true;
      for (Map.Entry<?, ?> entry : entries) {
        if (!first) {
          out.append(',');
        }
        first = false;
        quote((String) entry.getKey(), false, out);
        out.append(':');
        write(entry.getValue(), out, sortKeys);
      }
      out.append('}');
    } else if (value instanceof List<?> list) {
      out.append('[');
      for (int i = 0; i < list.size(); i++) {
        if (i > 0) {
          out.append(',');
        }
        write(list.get(i), out, sortKeys);
      }
      out.append(']');
    } else {
      throw new IllegalArgumentException("cannot encode " + value.getClass().getName() + " as exact JSON");
    }
  }

  /** Python's {@code json.dumps(s, ensure_ascii=asciiOnly)} of a string. */
  public static void quote(String s, boolean asciiOnly, StringBuilder out) {
    out.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> out.append("\\\"");
        case '\\' -> out.append("\\\\");
        case '\n' -> out.append("\\n");
        case '\r' -> out.append("\\r");
        case '\t' -> out.append("\\t");
        case '\b' -> out.append("\\b");
        case '\f' -> out.append("\\f");
        default -> {
          if (c < 0x20 || (asciiOnly && c > 0x7e)) {
            out.append(String.format("\\u%04x", (int) c));
          } else {
            out.append(c);
          }
        }
      }
    }
    out.append('"');
  }

  /** Already-serialized JSON text, written verbatim. */
  public record RawJson(String text) {}
}
