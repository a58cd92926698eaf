package io.fraudstream.evaluator.core;

import java.math.BigDecimal;

/** The value a stored event contributes to a rule's window, or null when it does not count (a pure function). */
@FunctionalInterface
interface ValueOf {
  BigDecimal of(StoredEvent event);
}
