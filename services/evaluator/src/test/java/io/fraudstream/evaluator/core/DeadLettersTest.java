package io.fraudstream.evaluator.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class DeadLettersTest {
  private static int utf8Length(String text) {
    return text.getBytes(StandardCharsets.UTF_8).length;
  }

  @Test
  void shortTextIsKeptAsIs() {
    String text = "x".repeat(DeadLetters.MAX_DETAIL_BYTES);
    assertSame(text, DeadLetters.bounded(text));
  }

  @ParameterizedTest
  @ValueSource(strings = {"x", "\u00e9", "\u20ac", "\ud83d\ude00"})
  void longTextIsCutAtACharacterBoundaryWithinTheLimit(String unit) {
    String text = unit.repeat(DeadLetters.MAX_DETAIL_BYTES + 1);
    String bounded = DeadLetters.bounded(text);
    assertTrue(utf8Length(bounded) <= DeadLetters.MAX_DETAIL_BYTES, () -> utf8Length(bounded) + " bytes");
    assertTrue(bounded.endsWith("\u2026"));
    String kept = bounded.substring(0, bounded.length() - 1);
    assertEquals(unit.repeat(kept.length() / unit.length()), kept, "only whole characters are kept");
    // As many as fit: one more character (with the ellipsis) would not.
    assertTrue(utf8Length(kept + unit + "\u2026") > DeadLetters.MAX_DETAIL_BYTES);
  }

  @Test
  void anyLimitIsHonoured() {
    assertEquals("ab\u2026", DeadLetters.bounded("abcdef", 5));
    assertEquals("\u2026", DeadLetters.bounded("\u00e9\u00e9\u00e9", 4));
  }

  @Test
  void loneSurrogatesAreEscapedSoTheDetailIsValidUtf8() {
    assertEquals("a\\ud800b\\udc00\ud83d\ude00", DeadLetters.bounded("a\ud800b\udc00\ud83d\ude00"));
    String bounded = DeadLetters.bounded("\ud800".repeat(DeadLetters.MAX_DETAIL_BYTES));
    assertTrue(bounded.startsWith("\\ud800\\ud800"));
    assertTrue(utf8Length(bounded) <= DeadLetters.MAX_DETAIL_BYTES);
  }

  @Test
  void previewIsCompactJsonCutToSixtyFourCodePoints() {
    assertEquals("{\"a\":[1,\"x\"]}", DeadLetters.preview(Map.of("a", List.of(1, "x"))));
    assertEquals("0.10", DeadLetters.preview(new BigDecimal("0.10")));
    assertEquals("null", DeadLetters.preview(null));
    String emoji = "\ud83d\ude00".repeat(100);
    String preview = DeadLetters.preview(emoji);
    assertEquals(DeadLetters.PREVIEW_CHARS + 1, preview.codePointCount(0, preview.length()));
    assertEquals("\"" + "\ud83d\ude00".repeat(DeadLetters.PREVIEW_CHARS - 1) + "\u2026", preview);
  }

  @Test
  void aRejectionCarriesItsBoundedDetail() {
    DeadLetters.Rejection rejection =
        DeadLetters.Rejection.of(DeadLetters.Error.INVALID, "y".repeat(5000));
    assertEquals(DeadLetters.Error.INVALID, rejection.error());
    assertTrue(utf8Length(rejection.detail()) <= DeadLetters.MAX_DETAIL_BYTES);
  }

  @Test
  void errorLabelsAreTheOneWordHeaders() {
    assertEquals(
        List.of("unparseable", "invalid", "late", "future", "unwritable"),
        Arrays.stream(DeadLetters.Error.values()).map(DeadLetters.Error::label).toList());
  }
}
