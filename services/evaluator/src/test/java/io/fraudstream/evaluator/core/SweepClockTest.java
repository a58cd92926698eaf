package io.fraudstream.evaluator.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class SweepClockTest {
  @Test
  void isTheLowerMedianOfTheLastFifteenEventTimes() {
    Random random = new Random(11);
    SweepClock clock = new SweepClock();
    List<Long> observed = new ArrayList<>();
    for (int step = 0; step < 2_000; step++) {
      // Mostly ascending times with disorder and outliers either way, and repeats.
      long eventTimeMs =
          switch (random.nextInt(10)) {
            case 0 -> Long.MIN_VALUE / 2 + random.nextInt(5);
            case 1 -> Long.MAX_VALUE / 2 - random.nextInt(5);
            case 2 -> observed.isEmpty() ? 0 : observed.get(observed.size() - 1);
            default -> 1_700_000_000_000L + step * 10L + random.nextInt(200);
          };
      clock.observe(eventTimeMs);
      observed.add(eventTimeMs);
      List<Long> last = observed.subList(Math.max(0, observed.size() - SweepClock.SAMPLES), observed.size());
      assertEquals(last, clock.samplesMs(), "oldest first, step " + step);
      List<Long> ordered = new ArrayList<>(last);
      ordered.sort(null);
      assertEquals(ordered.get((ordered.size() - 1) / 2), clock.nowMs(), "step " + step);
      assertSame(clock.nowMs(), clock.nowMs(), "the median of unchanged samples is computed once");
    }
  }

  @Test
  void hasNoTimeBeforeAnyTransaction() {
    SweepClock clock = new SweepClock();
    assertNull(clock.nowMs());
    assertEquals(List.of(), clock.samplesMs());
  }
}
