package io.fraudstream.evaluator.core;

/** A rule's state: a PAUSE rule raises nothing. */
public enum RuleState {
  ACTIVE,
  PAUSE
}
