"""free_port: ports that no process binding port 0 can be given in the meantime."""

from __future__ import annotations

import contextlib
import socket
from pathlib import Path

import pytest

from fraudstream_localstack import processes
from fraudstream_localstack.processes import ephemeral_range, free_port


def test_a_free_port_lies_outside_the_kernels_ephemeral_range_and_can_be_bound() -> None:
    low, high = ephemeral_range()
    port = free_port()
    assert not low <= port <= high
    with contextlib.closing(socket.socket(socket.AF_INET, socket.SOCK_STREAM)) as sock:
        sock.bind(("127.0.0.1", port))
        sock.listen()
        assert sock.getsockname()[1] == port


def test_one_process_is_never_handed_the_same_port_twice() -> None:
    ports = [free_port() for _ in range(200)]
    assert len(set(ports)) == len(ports)


def test_a_port_in_use_is_never_handed_out(monkeypatch: pytest.MonkeyPatch) -> None:
    with contextlib.closing(socket.socket(socket.AF_INET, socket.SOCK_STREAM)) as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        taken = busy.getsockname()[1]
        monkeypatch.setattr(processes, "_PORT_POOL", range(taken, taken + 1))
        monkeypatch.setattr(processes, "ephemeral_range", lambda: (1, 2))
        monkeypatch.setattr(processes, "_handed_out", set())
        with pytest.raises(OSError, match=f"no free TCP port in {taken}-{taken}"):
            free_port()


def test_the_kernels_range_is_read_and_a_missing_file_gives_linuxs_default(tmp_path: Path) -> None:
    source = tmp_path / "ip_local_port_range"
    source.write_text("40000\t50000\n")
    assert ephemeral_range(source) == (40_000, 50_000)
    assert ephemeral_range(tmp_path / "absent") == (32_768, 60_999)
