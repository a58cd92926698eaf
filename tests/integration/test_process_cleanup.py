"""A managed process never outlives its owner, not even when the owner is killed with SIGKILL."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

from fraudstream_localstack.node_host import process_info
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


def test_children_die_when_their_owner_is_killed(tmp_path: Path) -> None:
    owner = subprocess.Popen([sys.executable, "-c", OWNER, str(tmp_path / "sleeper.log")], stdout=subprocess.PIPE)
    try:
        assert owner.stdout is not None
        child = process_info(int(owner.stdout.readline()))
        assert child is not None and child.alive()
        owner.send_signal(signal.SIGKILL)
        owner.wait(timeout=10)
        wait_for(lambda: not child.alive(), 10, "the orphaned child to die")
    finally:
        owner.kill()
