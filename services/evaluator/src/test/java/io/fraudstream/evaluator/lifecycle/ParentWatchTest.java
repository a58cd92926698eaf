package io.fraudstream.evaluator.lifecycle;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The watch's wait, over a real process standing in for the parent; the halt itself is for the JVM's own test. */
class ParentWatchTest {
  @Test
  void theWaitEndsOnlyOnceTheWatchedProcessIsGoneAndTheGraceIsOver() throws Exception {
    Process stand = new ProcessBuilder("sleep", "60").start();
    try {
      ProcessHandle handle = stand.toHandle();
      CompletableFuture<Long> goneAt = new CompletableFuture<>();
      Thread thread =
          new Thread(
              () -> {
                if (ParentWatch.awaitGone(handle::isAlive, 20, 300)) {
                  goneAt.complete(System.nanoTime());
                }
              });
      thread.start();
      thread.join(500);
      assertTrue(thread.isAlive(), "ended while the process was alive");
      long killedAt = System.nanoTime();
      stand.destroyForcibly();
      long ended = goneAt.get(10, TimeUnit.SECONDS);
      assertTrue(ended - killedAt >= TimeUnit.MILLISECONDS.toNanos(300), "the grace was not waited");
    } finally {
      stand.destroyForcibly();
    }
  }

  @Test
  void anInterruptedWaitDoesNotEnd() throws Exception {
    CompletableFuture<Boolean> result = new CompletableFuture<>();
    Thread thread = new Thread(() -> result.complete(ParentWatch.awaitGone(() -> true, 20, 0)));
    thread.start();
    thread.interrupt();
    assertFalse(result.get(10, TimeUnit.SECONDS));
  }
}
