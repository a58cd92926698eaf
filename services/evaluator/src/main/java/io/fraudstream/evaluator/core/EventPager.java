package io.fraudstream.evaluator.core;

/** Where a window reads back an event it paged out: the stored copy of the group's event {@code id}. */
@FunctionalInterface
public interface EventPager {
  /** The event as last written; null if no row holds it. */
  StoredEvent load(long id);
}
