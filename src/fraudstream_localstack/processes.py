"""Child processes that always die with their owner, and readiness polling with deadlines."""

from __future__ import annotations

import contextlib
import os
import random
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

from fraudstream_detector.parent_death import die_with_parent

T = TypeVar("T")


class NotReadyError(TimeoutError):
    """A component did not become ready before its deadline."""


class ProcessDiedError(RuntimeError):
    """A managed process exited while something waited for it; waiting longer cannot help."""


def wait_for(
    check: Callable[[], T | None],
    timeout_s: float,
    what: str,
    interval_s: float = 0.1,
    watching: Sequence[ManagedProcess] = (),
) -> T:
    """Polls `check` until it returns something other than None/False, or raises NotReadyError after timeout_s.

    Exceptions raised by `check` count as "not yet" (the last one is named in the error), except
    ProcessDiedError, which ends the wait at once: as it does when a process of `watching` has exited (checked
    before each call of `check`).
    """
    deadline = time.monotonic() + timeout_s
    last_error: BaseException | None = None
    while True:
        try:
            for process in watching:
                process.check_alive()
            result = check()
            if result is not None and result is not False:
                return result
        except ProcessDiedError:
            raise
        except Exception as exc:
            last_error = exc
        if time.monotonic() >= deadline:
            detail = f" (last error: {last_error!r})" if last_error else ""
            raise NotReadyError(f"{what} not ready after {timeout_s:.0f}s{detail}")
        time.sleep(interval_s)


class StopSignals:
    """SIGINT and SIGTERM for a foreground supervisor (`make run`, the node's `run`), installed on creation.

    Until `started()`, a signal raises KeyboardInterrupt in the main thread, so a start in progress unwinds through
    its `finally` and stops what it started; after it, a signal ends `wait()`. Only the first signal interrupts: one
    that comes while that unwinding stops things (a second Ctrl-C, `timeout`'s TERM then another) cannot cut it short
    and leave processes behind. SIGKILL still ends the supervisor at once.
    """

    def __init__(self) -> None:
        self._started = threading.Event()
        self._stop = threading.Event()
        self._interrupted = False
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, self._on_signal)

    def _on_signal(self, signum: int, _frame: object) -> None:
        if not self._started.is_set() and not self._interrupted:
            self._interrupted = True
            raise KeyboardInterrupt
        if self._stop.is_set() or not self._started.is_set():  # a stop, or an aborted start's cleanup, is under way
            # os.write, not print: a print here could re-enter one the cleanup is in (RuntimeError) or meet a closed
            # pipe (BrokenPipeError), and either would cut the cleanup short.
            with contextlib.suppress(OSError):
                note = f"{signal.Signals(signum).name} while stopping: still stopping (SIGKILL ends at once)\n"
                os.write(2, note.encode())
        self._stop.set()

    def started(self) -> None:
        self._started.set()

    def wait(self, tick: Callable[[], None] = lambda: None, interval_s: float = 1.0) -> None:
        """Returns once a signal came; calls `tick` every `interval_s` until then."""
        while not self._stop.wait(interval_s):
            tick()


_EPHEMERAL_RANGE = Path("/proc/sys/net/ipv4/ip_local_port_range")
# The ports free_port() chooses from, for the local stack, the tests and the bench alike: above the fixed ports of
# the servers we run (the kubelet's and kube-proxy's 10248-10259 among them), below Kubernetes' NodePort range
# (30000-32767).
_PORT_POOL = range(12_000, 30_000)
_handed_out: set[int] = set()


def ephemeral_range(source: Path = _EPHEMERAL_RANGE) -> tuple[int, int]:
    """The ports the kernel hands to binds of port 0 and to outgoing connections (Linux's default if unreadable)."""
    try:
        low, high = (int(field) for field in source.read_text().split())
    except (OSError, ValueError):
        return 32_768, 60_999
    return low, high


def free_port() -> int:
    """A TCP port, free on every interface a moment ago, that the kernel gives no other process.

    The port lies outside the kernel's ephemeral range, so a process that binds port 0 (Spark's servers, the JVM's
    JMX, every outgoing connection's local end) cannot take it between this call and its user's bind. It is never
    handed out twice by one process.
    """
    low, high = ephemeral_range()
    candidates = [port for port in _PORT_POOL if not low <= port <= high]
    for port in random.sample(candidates, len(candidates)):
        if port in _handed_out:
            continue
        with contextlib.closing(socket.socket(socket.AF_INET, socket.SOCK_STREAM)) as sock:
            try:
                sock.bind(("0.0.0.0", port))
            except OSError:
                continue
        _handed_out.add(port)
        return port
    first, last = _PORT_POOL.start, _PORT_POOL.stop - 1
    raise OSError(f"no free TCP port in {first}-{last} outside the ephemeral range {low}-{high}")


def port_open(port: int, host: str = "127.0.0.1") -> bool:
    """True when something accepts TCP connections on host:port."""
    with contextlib.closing(socket.socket(socket.AF_INET, socket.SOCK_STREAM)) as sock:
        sock.settimeout(0.5)
        return sock.connect_ex((host, port)) == 0


def _killpg(pgid: int) -> Callable[[int], None]:
    return lambda sig: os.killpg(pgid, sig)


class ManagedProcess:
    """A child process in its own process group, logging to `log_path`.

    `stop()` signals the whole group (SIGTERM, then SIGKILL after `grace_s`) and reaps it, so nothing it started
    outlives it. Stopping twice is harmless.
    """

    def __init__(
        self,
        name: str,
        argv: Sequence[str],
        log_path: Path,
        env: dict[str, str] | None = None,
        cwd: Path | None = None,
    ) -> None:
        self.name = name
        self.argv = list(argv)
        self.log_path = log_path
        self.env = env
        self.cwd = cwd
        self._proc: subprocess.Popen[bytes] | None = None

    def start(self) -> ManagedProcess:
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.log_path, "ab") as log:
            self._proc = subprocess.Popen(
                self.argv,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env={**os.environ, **(self.env or {})},
                cwd=self.cwd,
                start_new_session=True,
                preexec_fn=die_with_parent,
            )
        return self

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc else None

    def alive(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def check_alive(self) -> None:
        """Raises RuntimeError with the log's tail if the process has exited."""
        if self._proc is not None and self._proc.poll() is not None:
            raise ProcessDiedError(f"{self.name} exited with {self._proc.returncode}; log tail:\n{self.log_tail()}")

    def log_tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    def stop(self, grace_s: float = 15.0) -> None:
        if self._proc is not None:
            stop_process_group(self._proc, grace_s)
        self._proc = None


def stop_process_group(proc: subprocess.Popen[bytes], grace_s: float) -> None:
    """Stops `proc`, which leads its own process group, with everything in that group, and reaps it: SIGTERM to the
    leader, then after `grace_s` to the group, then after 5 s SIGKILL to it. Nothing of the group is left afterwards,
    even when the leader ended first. Harmless when they are already gone."""
    # The leader first, so that it can stop its own children in order (a PySpark driver its JVM);
    # then the whole group, politely and then not.
    steps = ((proc.send_signal, signal.SIGTERM, grace_s), (_killpg(proc.pid), signal.SIGTERM, 5.0),
             (_killpg(proc.pid), signal.SIGKILL, 10.0))  # fmt: skip
    for send, sig, wait_s in steps:
        with contextlib.suppress(ProcessLookupError):
            send(sig)
        try:
            proc.wait(timeout=wait_s)
            break
        except subprocess.TimeoutExpired:
            continue
    # The leader may be gone while group members linger; make sure the group is empty.
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
