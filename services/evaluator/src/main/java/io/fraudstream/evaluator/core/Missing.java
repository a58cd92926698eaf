package io.fraudstream.evaluator.core;

/** Marks a projected field the transaction did not have (distinct from JSON null, which is Java {@code null}). */
public enum Missing {
  MISSING
}
