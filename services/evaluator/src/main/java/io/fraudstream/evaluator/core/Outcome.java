package io.fraudstream.evaluator.core;

import java.util.List;

/**
 * What one transaction did: alerts raised (sorted by rule id), groups it was late for (in key-group order), or why it
 * was invalid (then no alerts, no late groups and nothing stored).
 */
public record Outcome(List<Alert> alerts, List<String> lateGroups, String invalidReason) {}
