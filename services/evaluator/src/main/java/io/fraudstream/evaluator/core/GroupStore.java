package io.fraudstream.evaluator.core;

/** Where the shell keeps one GroupWindow per group key. */
public interface GroupStore {
  /** The window of a group, or null if unknown. */
  GroupWindow get(String groupKey);

  /** Keep a group's window after the engine changed it. */
  void put(String groupKey, GroupWindow window);

  /** Forget a group; a no-op if it is unknown. */
  void delete(String groupKey);
}
