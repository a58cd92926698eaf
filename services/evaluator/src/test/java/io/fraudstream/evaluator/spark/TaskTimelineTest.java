package io.fraudstream.evaluator.spark;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** TaskTimeline's line: what a task did and when, as bench/soak.py parses it. */
class TaskTimelineTest {
  @Test
  void aTaskThatReceivedRecordsAndCaughtUpLogsEveryTime() {
    TaskTimeline timeline = new TaskTimeline("evaluate", true, 1_000);
    timeline.received(0, 1_005);
    timeline.received(2, 1_010);
    timeline.caughtUp(1_020);
    timeline.caughtUp(1_030);
    timeline.received(1, 1_040);
    timeline.received(0, 1_050);
    assertEquals(
        "task timeline: operator=evaluate batch=7 partition=1 started=1000 firstRecord=1010 rulesCaughtUp=1020 "
            + "lastRecord=1040 closed=1100 records=3",
        timeline.line("7", 1, 1_100));
  }

  @Test
  void whatDidNotHappenIsADash() {
    TaskTimeline timeline = new TaskTimeline("report", false, 2_000);
    assertEquals(
        "task timeline: operator=report batch=- partition=0 started=2000 firstRecord=- rulesCaughtUp=- lastRecord=- "
            + "closed=2500 records=0",
        timeline.line("-", 0, 2_500));
    timeline.received(4, 2_100);
    assertEquals(
        "task timeline: operator=report batch=9 partition=0 started=2000 firstRecord=2100 rulesCaughtUp=- "
            + "lastRecord=2100 closed=- records=4",
        timeline.line("9", 0, -1),
        "a running task's line");
  }

  @Test
  void closingOutsideATaskLogsNothingAndDoesNotFail() {
    // The driver initializes and closes the processors for their state schema: no TaskContext there.
    TaskTimeline timeline = new TaskTimeline("evaluate", true, 3_000);
    assertDoesNotThrow(
        () -> {
          timeline.received(1, 3_001);
          timeline.caughtUp(3_002);
          timeline.close(3_003);
        });
  }
}
