package io.fraudstream.evaluator.lifecycle;

import java.util.function.BooleanSupplier;

/**
 * Ends the driver's JVM when the process that launched it is gone. PySpark's driver process launches the JVM and, when
 * it stops in order, stops the session and closes the JVM's input, on which Spark's gateway exits. A driver that is
 * killed (SIGKILL, or its own parent's death signal) leaves the session running, and the JVM may not exit: one whose
 * bench was sent SIGTERM with its broker was still there, idle, five minutes later. {@link #start} watches the
 * parent: once it is gone, the JVM has {@code graceMs} to exit by itself, and is halted after that.
 */
public final class ParentWatch {
  private static Thread watcher; // the one watch of this JVM, once started

  private ParentWatch() {}

  /**
   * Starts the watch of this JVM's parent process, polled every {@code pollMs}; does nothing if one was started
   * before or the JVM has no parent (it was orphaned before the call: the first poll halts it then).
   */
  public static synchronized void start(long graceMs, long pollMs) {
    if (watcher != null) {
      return;
    }
    ProcessHandle parent = ProcessHandle.current().parent().orElse(null);
    BooleanSupplier alive = parent == null ? () -> false : parent::isAlive;
    watcher =
        new Thread(
            () -> {
              if (awaitGone(alive, pollMs, graceMs)) {
                System.err.println(
                    "fraudstream: the process that launched this JVM is gone; halting it after "
                        + graceMs
                        + " ms");
                Runtime.getRuntime().halt(1);
              }
            },
            "fraudstream-parent-watch");
    watcher.setDaemon(true);
    watcher.start();
  }

  /**
   * Polls {@code alive} every {@code pollMs} until it is false, then waits {@code graceMs}; returns true then, false
   * if the thread was interrupted first.
   */
  static boolean awaitGone(BooleanSupplier alive, long pollMs, long graceMs) {
    try {
      while (alive.getAsBoolean()) {
        Thread.sleep(pollMs);
      }
      Thread.sleep(graceMs);
      return true;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }
}
