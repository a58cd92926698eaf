package io.fraudstream.evaluator.core;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadConstraints;
import java.io.IOException;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CoderResult;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * JSON text to Java values and back with numbers kept exact, within the limits Python's json_values applies (its
 * twin).
 *
 * <p>Values: JSON null is {@code null}; booleans {@link Boolean}; strings {@link String}; integers {@link BigInteger};
 * every other number a {@link BigDecimal} holding exactly the digits written ({@code 0.10} keeps its scale); arrays
 * {@link List}; objects {@link LinkedHashMap} in first-appearance order, a duplicate key keeping its last value (as
 * Python's json). Refused, with a {@link JsonValueException} saying why: NaN/Infinity, trailing tokens, invalid UTF-8,
 * nesting deeper than {@link #MAX_NESTING_DEPTH} containers, number literals longer than {@link #MAX_NUMBER_CHARS}
 * characters or with an exponent beyond +-{@link #MAX_EXPONENT}. Written strings escape lone surrogates, so the
 * output is always valid UTF-8.
 */
public final class Json {
  public static final int MAX_NESTING_DEPTH = 64;
  public static final int MAX_NUMBER_CHARS = 1000;
  public static final long MAX_EXPONENT = 999_999_999L;

  // Jackson's own limits sit above ours, so that ours decide (with the same messages as Python's).
  private static final JsonFactory FACTORY =
      JsonFactory.builder()
          .streamReadConstraints(
              StreamReadConstraints.builder()
                  .maxNumberLength(100_000)
                  .maxNestingDepth(MAX_NESTING_DEPTH + 10)
                  .maxStringLength(Integer.MAX_VALUE)
                  .maxNameLength(Integer.MAX_VALUE)
                  .build())
          .build();

  private Json() {}

  /** Parse UTF-8 JSON bytes (strictly decoded). */
  public static Object parse(byte[] data) throws JsonValueException {
    if (isAscii(data)) { // every byte a character of its own: nothing to decode strictly
      return parse(new String(data, StandardCharsets.US_ASCII));
    }
    CharsetDecoder decoder =
        StandardCharsets.UTF_8
            .newDecoder()
            .onMalformedInput(CodingErrorAction.REPORT)
            .onUnmappableCharacter(CodingErrorAction.REPORT);
    ByteBuffer in = ByteBuffer.wrap(data);
    CharBuffer out = CharBuffer.allocate((int) Math.min(Integer.MAX_VALUE - 16L, data.length + 1L));
    CoderResult result = decoder.decode(in, out, true);
    if (!result.isError()) {
      result = decoder.flush(out);
    }
    if (result.isError()) {
      throw new JsonValueException("not valid UTF-8 at byte " + in.position(), null);
    }
    return parse(out.flip().toString());
  }

  private static boolean isAscii(byte[] data) {
    for (byte b : data) {
      if (b < 0) {
        return false;
      }
    }
    return true;
  }

  /** Whether {@code s} holds a UTF-16 surrogate (paired or not). */
  static boolean hasSurrogate(String s) {
    for (int i = 0; i < s.length(); i++) {
      if (Character.isSurrogate(s.charAt(i))) {
        return true;
      }
    }
    return false;
  }

  /** Parse JSON text. */
  public static Object parse(String text) throws JsonValueException {
    try (JsonParser parser = FACTORY.createParser(text)) {
      JsonToken first = parser.nextToken();
      if (first == null) {
        throw new JsonValueException("not JSON: Expecting value: line 1 column 1 (char 0)", null);
      }
      Object value = read(parser, first, 1);
      if (parser.nextToken() != null) {
        throw new JsonValueException("not JSON: Extra data after the JSON value", null);
      }
      return value;
    } catch (JsonValueException exc) {
      throw exc;
    } catch (IOException | RuntimeException exc) {
      String message = exc.getMessage();
      if (message != null && message.contains("Document nesting depth")) {
        throw new JsonValueException(nestingMessage(), exc);
      }
      if (message != null && message.contains("Number value length")) {
        throw new JsonValueException("JSON number longer than " + MAX_NUMBER_CHARS + " characters", exc);
      }
      throw new JsonValueException(
          "not JSON: "
              + (message == null ? exc.getClass().getSimpleName() : message.lines().findFirst().orElse(message)),
          exc);
    }
  }

  private static String nestingMessage() {
    return "JSON nested deeper than " + MAX_NESTING_DEPTH + " levels";
  }

  /** {@code depth} is the nesting depth a container read here would have (the outermost one has 1). */
  private static Object read(JsonParser parser, JsonToken token, int depth)
      throws IOException, JsonValueException {
    switch (token) {
      case START_OBJECT:
        {
          if (depth > MAX_NESTING_DEPTH) {
            throw new JsonValueException(nestingMessage(), null);
          }
          Map<String, Object> map = new LinkedHashMap<>();
          for (JsonToken next = parser.nextToken(); next != JsonToken.END_OBJECT; next = parser.nextToken()) {
            String name = parser.currentName();
            map.put(name, read(parser, parser.nextToken(), depth + 1));
          }
          return map;
        }
      case START_ARRAY:
        {
          if (depth > MAX_NESTING_DEPTH) {
            throw new JsonValueException(nestingMessage(), null);
          }
          List<Object> list = new ArrayList<>();
          for (JsonToken next = parser.nextToken(); next != JsonToken.END_ARRAY; next = parser.nextToken()) {
            list.add(read(parser, next, depth + 1));
          }
          return list;
        }
      case VALUE_STRING:
        return parser.getText();
      case VALUE_NUMBER_INT:
        return new BigInteger(checkedNumber(parser.getText()));
      case VALUE_NUMBER_FLOAT:
        return new BigDecimal(checkedNumber(parser.getText()));
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

  /** A number literal within the limits (the class comment), else a JsonValueException saying which. */
  private static String checkedNumber(String literal) throws JsonValueException {
    if (literal.length() > MAX_NUMBER_CHARS) {
      throw new JsonValueException("JSON number longer than " + MAX_NUMBER_CHARS + " characters", null);
    }
    int e = Math.max(literal.indexOf('e'), literal.indexOf('E'));
    if (e >= 0) {
      String digits = literal.substring(e + 1);
      BigInteger exponent = new BigInteger(digits.startsWith("+") ? digits.substring(1) : digits);
      if (exponent.abs().compareTo(BigInteger.valueOf(MAX_EXPONENT)) > 0) {
        throw new JsonValueException("JSON number exponent beyond +-" + MAX_EXPONENT, null);
      }
    }
    return literal;
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
        sorted.sort((a, b) -> CodePointOrder.compareStrings((String) a.getKey(), (String) b.getKey()));
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

  /**
   * Python's {@code json.dumps(s, ensure_ascii=asciiOnly)} of a string, except that a lone surrogate is always
   * escaped (as json_values.quote does), so the text encodes to UTF-8.
   */
  public static void quote(String s, boolean asciiOnly, StringBuilder out) {
    out.append('"');
    int plain = 0; // s[:plain] needs no escape: appended in one piece
    while (plain < s.length() && isPlain(s.charAt(plain), asciiOnly)) {
      plain++;
    }
    out.append(s, 0, plain);
    for (int i = plain; i < s.length(); i++) {
      char c = s.charAt(i);
      if (Character.isSurrogate(c)) {
        boolean pair =
            Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1));
        if (pair && !asciiOnly) {
          out.append(c).append(s.charAt(++i));
        } else {
          out.append(String.format("\\u%04x", (int) c));
        }
        continue;
      }
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

  /** Whether {@link #quote} writes {@code c} as itself. */
  private static boolean isPlain(char c, boolean asciiOnly) {
    return c >= 0x20 && c != '"' && c != '\\' && !Character.isSurrogate(c) && (!asciiOnly || c <= 0x7e);
  }

  /** Already-serialized JSON text, written verbatim. */
  public record RawJson(String text) {}
}
