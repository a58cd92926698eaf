package io.fraudstream.evaluator.core;

import java.nio.charset.StandardCharsets;

/**
 * Why a transaction goes to the DLQ: the one-word {@code error} header and its bounded {@code error.detail} (twin of
 * Python's dead_letters; CONTRACT section 2).
 *
 * <p>A detail is at most {@link #MAX_DETAIL_BYTES} of UTF-8 ({@link #bounded}); values quoted in it are compact JSON
 * cut to {@link #PREVIEW_CHARS} code points ({@link #preview}). Both cores render the same texts for the same record.
 */
public final class DeadLetters {
  public static final int MAX_DETAIL_BYTES = 1024;
  public static final int PREVIEW_CHARS = 64;
  private static final String ELLIPSIS = "\u2026";

  /** The DLQ {@code error} header and {@code fraud_dlq_records_total{error}} label. */
  public enum Error {
    /** Empty, not UTF-8, not JSON, or beyond the JSON limits. */
    UNPARSEABLE("unparseable"),
    /** JSON, but not a transaction: not an object, or eventTime missing, not an integer or out of range. */
    INVALID("invalid"),
    /** Older than its key group's horizon for at least one group. */
    LATE("late"),
    /** eventTime more than the allowed future skew ahead of the record's Kafka timestamp. */
    FUTURE("future"),
    /** Metrics only: an output Kafka refused for good. */
    UNWRITABLE("unwritable");

    private final String label;

    Error(String label) {
      this.label = label;
    }

    public String label() {
      return label;
    }
  }

  /** A transaction that is not evaluated at all: its DLQ error and bounded detail. */
  public record Rejection(Error error, String detail) {
    public static Rejection of(Error error, String detail) {
      return new Rejection(error, bounded(detail));
    }
  }

  private DeadLetters() {}

  /** {@code text} cut at a character boundary to at most {@code maxBytes} UTF-8 bytes, an ellipsis ending a cut. */
  public static String bounded(String text, int maxBytes) {
    String safe = escapeLoneSurrogates(text);
    if (safe.getBytes(StandardCharsets.UTF_8).length <= maxBytes) {
      return safe;
    }
    int budget = maxBytes - ELLIPSIS.getBytes(StandardCharsets.UTF_8).length;
    int used = 0;
    int end = 0;
    while (end < safe.length()) {
      int cp = safe.codePointAt(end);
      int bytes = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
      if (used + bytes > budget) {
        break;
      }
      used += bytes;
      end += Character.charCount(cp);
    }
    return safe.substring(0, end) + ELLIPSIS;
  }

  public static String bounded(String text) {
    return bounded(text, MAX_DETAIL_BYTES);
  }

  /** A JSON value as compact JSON, cut to {@link #PREVIEW_CHARS} code points (an ellipsis marks the cut). */
  public static String preview(Object value) {
    String text = Json.write(value);
    if (text.codePointCount(0, text.length()) <= PREVIEW_CHARS) {
      return text;
    }
    return text.substring(0, text.offsetByCodePoints(0, PREVIEW_CHARS)) + ELLIPSIS;
  }

  /** {@code text} with each lone surrogate replaced by its JSON escape; valid pairs and the rest unchanged. */
  static String escapeLoneSurrogates(String text) {
    StringBuilder out = null;
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      boolean lone = false;
      if (Character.isHighSurrogate(c)) {
        if (i + 1 < text.length() && Character.isLowSurrogate(text.charAt(i + 1))) {
          if (out != null) {
            out.append(c).append(text.charAt(i + 1));
          }
          i++;
          continue;
        }
        lone = true;
      } else if (Character.isLowSurrogate(c)) {
        lone = true;
      }
      if (lone && out == null) {
        out = new StringBuilder(text.length() + 16).append(text, 0, i);
      }
      if (out != null) {
        if (lone) {
          out.append(String.format("\\u%04x", (int) c));
        } else {
          out.append(c);
        }
      }
    }
    return out == null ? text : out.toString();
  }
}
