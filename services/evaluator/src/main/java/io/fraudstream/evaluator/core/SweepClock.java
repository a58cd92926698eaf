package io.fraudstream.evaluator.core;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * The event-time clock of idle-group sweeps: the lower median of the last {@link #SAMPLES} evaluated event times
 * (Python's engine.SweepClock). One outlier cannot move a median: it always lies between event times of ordinary
 * transactions. Null before any transaction.
 */
public final class SweepClock {
  public static final int SAMPLES = 15;
  private final ArrayDeque<Long> samples = new ArrayDeque<>(SAMPLES);

  public void observe(long eventTimeMs) {
    if (samples.size() == SAMPLES) {
      samples.pollFirst();
    }
    samples.addLast(eventTimeMs);
  }

  /** The samples, oldest first. */
  public List<Long> samplesMs() {
    return List.copyOf(samples);
  }

  public Long nowMs() {
    if (samples.isEmpty()) {
      return null;
    }
    List<Long> ordered = new ArrayList<>(samples);
    Collections.sort(ordered);
    return ordered.get((ordered.size() - 1) / 2);
  }
}
