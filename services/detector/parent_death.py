"""Processes that die with the process that started them, by Linux's parent-death signal: the local stack's children
and the JVM that PySpark launches for the detector."""

from __future__ import annotations

import contextlib
import ctypes
import signal
import subprocess
from collections.abc import Iterator
from typing import Any

_PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:
    """In a child before exec (a `preexec_fn`): ask Linux to SIGKILL it when the thread that started it ends, however
    it ends, SIGKILL included. The signal outlives exec, so a shell script that execs its program passes it on.
    Callers start their children from a thread that lives as long as their process (the main thread, here)."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


@contextlib.contextmanager
def launched_jvm_dies_with_this_process() -> Iterator[None]:
    """While open, the JVM that PySpark launches (`pyspark.java_gateway.launch_gateway`, through `spark-submit`,
    which execs it) gets `die_with_parent` after PySpark's own preparation of it (which ignores SIGINT).

    Without it, a driver process that is killed leaves its JVM running with an active session: PySpark's JVM exits
    when its input closes, but one whose driver and broker were killed was still there, idle, five minutes later.
    PySpark has no setting for this: `launch_gateway` replaces any `preexec_fn` it is given, so this wraps the
    `Popen` it calls (tests/integration/detector/test_session.py fails if that stops working)."""
    import pyspark.java_gateway as java_gateway

    popen: type[subprocess.Popen[bytes]] = getattr(java_gateway, "Popen")  # noqa: B009 (its import, not an export)

    def popen_dying_with_us(*args: Any, **kwargs: Any) -> subprocess.Popen[bytes]:
        prepare = kwargs.get("preexec_fn")

        def preexec() -> None:
            if prepare is not None:
                prepare()
            die_with_parent()

        return popen(*args, **{**kwargs, "preexec_fn": preexec})

    setattr(java_gateway, "Popen", popen_dying_with_us)  # noqa: B010 (a module's name, not an attribute we own)
    try:
        yield
    finally:
        setattr(java_gateway, "Popen", popen)  # noqa: B010
