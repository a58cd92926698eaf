package io.fraudstream.evaluator.core;

import java.util.HashMap;
import java.util.Map;

/** A map-backed GroupStore keeping the window objects themselves (their persistence hooks are drained on put). */
public final class InMemoryGroupStore implements GroupStore {
  private final Map<String, GroupWindow> windows = new HashMap<>();

  @Override
  public GroupWindow get(String groupKey) {
    return windows.get(groupKey);
  }

  @Override
  public void put(String groupKey, GroupWindow window) {
    window.takeJournal();
    window.takeEvicted();
    window.takeReprojected();
    windows.put(groupKey, window);
  }

  @Override
  public void delete(String groupKey) {
    windows.remove(groupKey);
  }

  /** Number of groups held. */
  public int size() {
    return windows.size();
  }

  /** The heap its windows hold by their estimates ({@link GroupWindow#heapBytes}). */
  public long heapBytes() {
    long bytes = 0;
    for (GroupWindow window : windows.values()) {
      bytes += window.heapBytes();
    }
    return bytes;
  }
}
