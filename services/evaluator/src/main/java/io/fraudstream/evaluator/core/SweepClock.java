package io.fraudstream.evaluator.core;

import java.util.Arrays;
import java.util.List;

/**
 * The event-time clock of idle-group sweeps: the lower median of the last {@link #SAMPLES} evaluated event times
 * (Python's engine.SweepClock). One outlier cannot move a median: it always lies between event times of ordinary
 * transactions. Null before any transaction.
 *
 * <p>{@link #observe} runs for every transaction and {@link #nowMs} for every group a sweep visits, so the samples
 * are unboxed and the median is computed once per change.
 */
public final class SweepClock {
  public static final int SAMPLES = 15;
  private final long[] ring = new long[SAMPLES];
  private int count;
  private int next; // where the next sample goes: the oldest one once the ring is full
  private Long median; // of the samples as they are now; null until asked for after a change

  public void observe(long eventTimeMs) {
    ring[next] = eventTimeMs;
    next = (next + 1) % SAMPLES;
    count = Math.min(count + 1, SAMPLES);
    median = null;
  }

  /** The samples, oldest first. */
  public List<Long> samplesMs() {
    Long[] samples = new Long[count];
    int oldest = count < SAMPLES ? 0 : next;
    for (int i = 0; i < count; i++) {
      samples[i] = ring[(oldest + i) % SAMPLES];
    }
    return List.of(samples);
  }

  public Long nowMs() {
    if (count == 0) {
      return null;
    }
    if (median == null) {
      long[] ordered = Arrays.copyOf(ring, count);
      Arrays.sort(ordered);
      median = ordered[(count - 1) / 2];
    }
    return median;
  }
}
