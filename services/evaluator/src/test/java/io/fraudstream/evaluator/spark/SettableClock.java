package io.fraudstream.evaluator.spark;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;

/** A clock that stands still until a test moves it. */
final class SettableClock extends Clock {
  private long nowMs;

  SettableClock(long nowMs) {
    this.nowMs = nowMs;
  }

  void set(long ms) {
    nowMs = ms;
  }

  @Override
  public long millis() {
    return nowMs;
  }

  @Override
  public Instant instant() {
    return Instant.ofEpochMilli(nowMs);
  }

  @Override
  public ZoneId getZone() {
    return ZoneOffset.UTC;
  }

  @Override
  public Clock withZone(ZoneId zone) {
    return this;
  }
}
