"""Removing the node's host link copes with the kernel removing it at the same moment (it does, in the background,
once the node's network namespace is freed)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from fraudstream_localstack import node_host as host
from fraudstream_localstack.node_config import NodeLayout


class FakeIp:
    """`ip link show|del fsk8s0` on a link that the kernel removes after `vanishes_after` looks."""

    def __init__(self, vanishes_after: int) -> None:
        self.looks = 0
        self.vanishes_after = vanishes_after
        self.deleted = False
        self.commands: list[str] = []

    def __call__(self, argv: list[str], check: bool = True) -> subprocess.CompletedProcess[str]:
        self.commands.append(argv[2])
        present = not self.deleted and self.looks < self.vanishes_after
        if argv[2] == "show":
            self.looks += 1
        elif present:
            self.deleted = True
        code = 0 if present else 1
        if check and code:
            raise host.HostCommandError("Cannot find device")
        return subprocess.CompletedProcess(argv, code, "", "" if present else 'Cannot find device "fsk8s0"')


@pytest.mark.parametrize(
    ("vanishes_after", "commands"),
    [
        (0, ["show", "show"]),  # already gone
        (1, ["show", "del", "show"]),  # gone between the look and the delete: not an error
        (99, ["show", "del", "show"]),  # deleted by us
    ],
)
def test_the_host_link_is_gone_whoever_removed_it(
    monkeypatch: pytest.MonkeyPatch, vanishes_after: int, commands: list[str]
) -> None:
    ip = FakeIp(vanishes_after)
    monkeypatch.setattr(host, "run", ip)
    assert host.delete_host_link(NodeLayout(Path("/x"), 0)) is True
    assert ip.commands == commands
