"""A managed process never outlives its owner, not even when the owner is killed with SIGKILL."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from fraudstream_localstack.processes import wait_for

pytestmark = pytest.mark.integration

OWNER = """
import sys, time
from pathlib import Path
from fraudstream_localstack.processes import ManagedProcess
child = ManagedProcess("sleeper", ["sleep", "300"], Path(sys.argv[1])).start()
print(child.pid, flush=True)
time.sleep(300)
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is dead for our purpose; its reaper (init) collects it.
    return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"


def test_children_die_when_their_owner_is_killed(tmp_path: Path) -> None:
    owner = subprocess.Popen([sys.executable, "-c", OWNER, str(tmp_path / "sleeper.log")], stdout=subprocess.PIPE)
    try:
        assert owner.stdout is not None
        child_pid = int(owner.stdout.readline())
        assert _alive(child_pid)
        owner.send_signal(signal.SIGKILL)
        owner.wait(timeout=10)
        wait_for(lambda: not _alive(child_pid), 10, "the orphaned child to die")
    finally:
        owner.kill()
