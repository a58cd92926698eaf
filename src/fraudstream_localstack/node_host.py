"""What a local node creates on the machine outside its processes, how to find it, and how to remove it.

The node lives in a network namespace of its own (bind-mounted on `<state>/netns`), joined to the host by one veth
pair (`fsk8s<i>` on the host, `eth0` in the node). Everything the node's components add to the network, the
`cni0` bridge, the pods' veths, kube-proxy's and the CNI plugins' iptables rules, is inside that namespace and
disappears with it; the host gets one link with one address and two routes (pod and Service CIDR, via the node),
which disappear with the link. Every mount the node makes (container root filesystems, pod network namespaces,
volumes, the namespace itself) is below the state directory. Pod processes run in cgroups below the node's own
cgroup root in each hierarchy.

`NodeFootprint` lists all of it; `sweep` removes all of it, whether the node stopped in order or its processes
were killed. Only things that carry the node's state directory, index-derived names, or cgroup root are touched.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import fcntl
import functools
import hashlib
import ipaddress
import json
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from .node_config import (
    CNI_RESULTS_DIR,
    CONTAINER_LOG_LINKS_DIR,
    MACHINE_DIR,
    MAX_NODES,
    SHIM_SOCKET_DIR,
    NodeLayout,
)
from .processes import wait_for

CGROUP_FS = Path("/sys/fs/cgroup")
# Executables a node runs; a process is the node's when it is one of these and names the node's state directory.
NODE_EXECUTABLES = frozenset(
    {
        "containerd",
        "containerd-shim-runc-v2",
        "etcd",
        "kube-apiserver",
        "kube-controller-manager",
        "kube-scheduler",
        "kubelet",
        "kube-proxy",
    }
)
# kubelet sets these machine-wide at start (protectKernelDefaults: false); the first node records their values and
# the last one to go restores them.
KUBELET_SYSCTLS = (
    "vm/overcommit_memory",
    "vm/panic_on_oom",
    "kernel/panic",
    "kernel/panic_on_oops",
    "kernel/keys/root_maxkeys",
    "kernel/keys/root_maxbytes",
)
SYSCTL_RECORD = MACHINE_DIR / "sysctl-originals.json"
MNT_DETACH = 2


class HostCommandError(RuntimeError):
    """A command that changes the machine (ip, unshare, ...) failed."""


def run(argv: list[str], check: bool = True) -> subprocess.CompletedProcess[str]:
    """Runs `argv`, capturing output; raises HostCommandError with its stderr when `check` and it fails."""
    proc = subprocess.run(argv, capture_output=True, text=True, check=False)
    if check and proc.returncode != 0:
        raise HostCommandError(f"{' '.join(argv)} failed ({proc.returncode}): {proc.stderr.strip()}")
    return proc


def in_node(layout: NodeLayout, argv: list[str]) -> list[str]:
    """`argv` run inside the node's network namespace (and only that: mounts and PIDs stay the host's)."""
    return ["nsenter", f"--net={layout.netns_file}", "--", *argv]


# ---- the node's network ------------------------------------------------------------------------------------------


def overlapping_routes(layout: NodeLayout) -> list[str]:
    """Host routes, other than the node's own link, that overlap the node's link, pod or Service ranges."""
    ours = [ipaddress.ip_network(n) for n in (layout.link_cidr, layout.pod_cidr, layout.service_cidr)]
    found = []
    for line in run(["ip", "-4", "route", "show", "table", "all"]).stdout.splitlines():
        words = line.split()
        if (
            not words
            or words[0] in ("default", "broadcast", "local", "unreachable")
            or f"dev {layout.host_link}" in line
        ):
            continue
        with contextlib.suppress(ValueError):
            if any(ipaddress.ip_network(words[0], strict=False).overlaps(net) for net in ours):
                found.append(line)
    return found


def create_network(layout: NodeLayout) -> None:
    """The node's network namespace, the veth pair, addresses and routes on both sides. Not idempotent: call
    `sweep` first."""
    overlaps = overlapping_routes(layout)
    if overlaps:
        raise HostCommandError(f"node {layout.index}'s address ranges are in use on this machine: {overlaps}")
    layout.netns_file.parent.mkdir(parents=True, exist_ok=True)
    layout.netns_file.touch()
    run(["unshare", f"--net={layout.netns_file}", "true"])
    run(
        ["ip", "link", "add", layout.host_link, "type", "veth", "peer", "name", "eth0", "netns", str(layout.netns_file)]
    )
    run(["ip", "addr", "add", f"{layout.host_ip}/{layout.link_prefix}", "dev", layout.host_link])
    run(["ip", "link", "set", layout.host_link, "up"])
    for cidr in (layout.pod_cidr, layout.service_cidr):
        run(["ip", "route", "add", cidr, "via", layout.node_ip, "dev", layout.host_link])
    for argv in (
        ["ip", "link", "set", "lo", "up"],
        ["ip", "addr", "add", f"{layout.node_ip}/{layout.link_prefix}", "dev", "eth0"],
        ["ip", "link", "set", "eth0", "up"],
        ["ip", "route", "add", "default", "via", layout.host_ip],
    ):
        run(in_node(layout, argv))
    # Per-namespace settings: the node routes for its pods, and bridged pod traffic passes iptables (Services
    # between pods on the one bridge need kube-proxy's rules to see it).
    for key in ("net/ipv4/ip_forward", "net/bridge/bridge-nf-call-iptables", "net/ipv4/conf/all/route_localnet"):
        run(in_node(layout, ["sh", "-c", f"echo 1 > /proc/sys/{key}"]))


# ---- cgroups ------------------------------------------------------------------------------------------------------


def cgroup_hierarchies() -> list[Path]:
    """Every mounted cgroup hierarchy (v1 controllers, the named systemd one, the unified v2 one)."""
    found = []
    for entry in _mountinfo():
        if entry.fstype in ("cgroup", "cgroup2"):
            found.append(entry.mountpoint)
    return found


def ensure_cgroup_root(layout: NodeLayout) -> None:
    """kubelet requires its --cgroup-root to exist in every hierarchy. A new cpuset cgroup starts with no CPUs and
    no memory nodes, so it gets its parent's."""
    for hierarchy in cgroup_hierarchies():
        path = hierarchy / layout.cgroup_root.lstrip("/")
        path.mkdir(exist_ok=True)
        for name in ("cpuset.cpus", "cpuset.mems"):
            if (path / name).exists() and not (path / name).read_text().strip():
                (path / name).write_text((hierarchy / name).read_text())


def cgroup_dirs(layout: NodeLayout) -> list[Path]:
    """The node's cgroups, deepest first."""
    dirs: list[Path] = []
    for hierarchy in cgroup_hierarchies():
        root = hierarchy / layout.cgroup_root.lstrip("/")
        if root.is_dir():
            dirs.extend(Path(p) for p, _, _ in os.walk(root))
    return sorted(dirs, key=lambda p: len(p.parts), reverse=True)


def cgroup_pids(layout: NodeLayout) -> set[int]:
    """Every process in one of the node's cgroups: the pods' processes."""
    pids: set[int] = set()
    for path in cgroup_dirs(layout):
        with contextlib.suppress(OSError):
            pids.update(int(p) for p in (path / "cgroup.procs").read_text().split())
    return pids


# ---- processes ----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ProcessInfo:
    pid: int
    start_ticks: int
    exe: str
    cmdline: str

    def alive(self) -> bool:
        """True while this very process (not a later one with its pid) exists and is not a zombie."""
        try:
            stat = Path(f"/proc/{self.pid}/stat").read_text()
        except OSError:
            return False
        fields = stat.rsplit(")", 1)[1].split()
        return fields[0] != "Z" and int(fields[19]) == self.start_ticks


def process_info(pid: int) -> ProcessInfo | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        try:
            exe = os.readlink(f"/proc/{pid}/exe")
        except OSError:
            exe = ""
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[1].split()
    return ProcessInfo(pid=pid, start_ticks=int(fields[19]), exe=exe, cmdline=cmdline.strip())


def _all_pids() -> Iterator[int]:
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            yield int(entry.name)


def node_processes(layout: NodeLayout) -> list[ProcessInfo]:
    """The node's component processes (containerd and its shims, the control plane, kubelet, kube-proxy) and its
    pods' processes. Never the caller or its ancestors."""
    exclude = _self_and_ancestors()
    marker = str(layout.state_dir)
    pod_pids = cgroup_pids(layout)
    found = []
    for pid in _all_pids():
        if pid in exclude:
            continue
        info = process_info(pid)
        if info is None:
            continue
        exe_name = Path(info.exe.removesuffix(" (deleted)")).name
        if pid in pod_pids or (exe_name in NODE_EXECUTABLES and marker in info.cmdline):
            found.append(info)
    return found


def _self_and_ancestors() -> set[int]:
    pids, pid = set(), os.getpid()
    while pid > 1:
        pids.add(pid)
        try:
            pid = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            break
    return pids


def _task_ids(layout: NodeLayout) -> set[str]:
    """IDs of every pod sandbox and container containerd has (had) state for."""
    ids: set[str] = set()
    for base in (layout.containerd_state / "io.containerd.runtime.v2.task" / "k8s.io",
                 layout.containerd_root / "io.containerd.grpc.v1.cri" / "sandboxes",
                 layout.containerd_root / "io.containerd.grpc.v1.cri" / "containers"):  # fmt: skip
        with contextlib.suppress(OSError):
            ids.update(entry.name for entry in base.iterdir())
    return ids


def shim_socket(layout: NodeLayout, task_id: str) -> Path:
    """Where containerd 1.6 puts the socket of the shim for `task_id`: named by the SHA-256 of the daemon's address,
    namespace and id, in a directory of its own that the state directory does not move."""
    digest = hashlib.sha256(os.path.join(str(layout.containerd_socket), "k8s.io", task_id).encode()).hexdigest()
    return SHIM_SOCKET_DIR / digest


def kill_all(processes: Iterable[ProcessInfo], timeout_s: float = 30) -> None:
    """SIGKILL each of `processes` (by pid, only if it is still the same process) and wait until all are gone."""
    targets = [p for p in processes if p.alive()]
    for proc in targets:
        with contextlib.suppress(ProcessLookupError):
            os.kill(proc.pid, signal.SIGKILL)
    wait_for(lambda: not any(p.alive() for p in targets), timeout_s, "the node's processes to exit", interval_s=0.1)


# ---- mounts -------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MountEntry:
    mount_id: int
    mountpoint: Path
    fstype: str
    source: str


def _unescape(value: str) -> str:
    return value.encode().decode("unicode_escape") if "\\" in value else value


def _mountinfo() -> list[MountEntry]:
    entries = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        left, _, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        entries.append(MountEntry(int(fields[0]), Path(_unescape(fields[4])), tail[0], _unescape(tail[1])))
    return entries


def node_mounts(layout: NodeLayout) -> list[MountEntry]:
    """Mounts at or below the state directory, most recent first (the order to unmount them in)."""
    root = layout.state_dir.resolve()
    found = [m for m in _mountinfo() if m.mountpoint == root or root in m.mountpoint.parents]
    return sorted(found, key=lambda m: m.mount_id, reverse=True)


def _umount(path: Path) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.umount2(str(path).encode(), 0) != 0:
        err = ctypes.get_errno()
        if err in (errno.EINVAL, errno.ENOENT):  # not a mount point (any more)
            return
        if libc.umount2(str(path).encode(), MNT_DETACH) != 0 and ctypes.get_errno() not in (errno.EINVAL, errno.ENOENT):
            raise OSError(ctypes.get_errno(), f"umount {path}")


def unmount_all(layout: NodeLayout) -> None:
    """Unmounts everything below the state directory; repeats while unmounting uncovers further mounts."""
    for _ in range(10):
        mounts = node_mounts(layout)
        if not mounts:
            return
        for mount in mounts:
            _umount(mount.mountpoint)
    raise OSError(f"mounts left below {layout.state_dir}: {[str(m.mountpoint) for m in node_mounts(layout)]}")


# ---- links, files -------------------------------------------------------------------------------------------------


def host_link_exists(layout: NodeLayout) -> bool:
    return run(["ip", "link", "show", layout.host_link], check=False).returncode == 0


def stray_files(layout: NodeLayout) -> list[Path]:
    """Files the node's components leave outside the state directory when not stopped in order: libcni's cached
    results, kubelet's links to container logs, and the shims' sockets."""
    found = []
    ids = _task_ids(layout)
    if CNI_RESULTS_DIR.is_dir():
        for path in CNI_RESULTS_DIR.iterdir():
            # <network>-<sandbox id>-<interface>; containerd's own loopback network is "cni-loopback".
            if path.name.startswith(layout.cni_results_prefix) or any(f"-{i}-" in path.name for i in ids):
                found.append(path)
    if CONTAINER_LOG_LINKS_DIR.is_dir():
        logs = str(layout.pod_logs_dir)
        for link in CONTAINER_LOG_LINKS_DIR.iterdir():
            with contextlib.suppress(OSError):
                if link.is_symlink() and os.readlink(link).startswith(logs):
                    found.append(link)
    found += [sock for sock in map(functools.partial(shim_socket, layout), sorted(ids)) if sock.exists()]
    return found


# Directories the node's components create outside the state directory (none is any Debian package's); removed when
# empty and no other node runs, deepest first.
SHARED_DIRS = (
    CNI_RESULTS_DIR,
    CNI_RESULTS_DIR.parent,
    CONTAINER_LOG_LINKS_DIR,
    SHIM_SOCKET_DIR,
    SHIM_SOCKET_DIR.parent,
)


def remove_empty_shared_dirs() -> None:
    for path in SHARED_DIRS:
        with contextlib.suppress(OSError):
            path.rmdir()


# ---- the index lock and machine-wide records ----------------------------------------------------------------------


class IndexLock:
    """An exclusive lock on a node index, held while a node of that index may exist. Released when the holder
    exits, however it exits (an flock on an open file)."""

    def __init__(self, layout: NodeLayout, fd: int) -> None:
        self.layout = layout
        self._fd: int | None = fd

    @staticmethod
    def try_acquire(layout: NodeLayout) -> IndexLock | None:
        MACHINE_DIR.mkdir(parents=True, exist_ok=True)
        fd = os.open(layout.lock_file, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return None
        return IndexLock(layout, fd)

    def previous_owner(self) -> Path | None:
        """The state directory of the node that last held this index, if it recorded one."""
        try:
            return Path(self.layout.owner_file.read_text().strip())
        except OSError:
            return None

    def record_owner(self) -> None:
        self.layout.owner_file.write_text(str(self.layout.state_dir.resolve()) + "\n")

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def other_nodes_running(index: int) -> bool:
    """True if a node of another index holds its lock now."""
    for other in range(MAX_NODES):
        if other == index:
            continue
        path = MACHINE_DIR / f"node-{other}.lock"
        if not path.exists():
            continue
        fd = os.open(path, os.O_RDWR | os.O_CLOEXEC)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        finally:
            os.close(fd)
    return False


def record_sysctls() -> None:
    """Saves the values kubelet will change, unless a running node already saved the machine's originals."""
    if SYSCTL_RECORD.exists():
        return
    MACHINE_DIR.mkdir(parents=True, exist_ok=True)
    values = {key: Path("/proc/sys", key).read_text().strip() for key in KUBELET_SYSCTLS}
    tmp = SYSCTL_RECORD.with_suffix(".tmp")
    tmp.write_text(json.dumps(values))
    tmp.replace(SYSCTL_RECORD)


def restore_sysctls(index: int) -> None:
    """Puts back what `record_sysctls` saved; for the last node to go."""
    if not SYSCTL_RECORD.exists():
        return
    for key, value in json.loads(SYSCTL_RECORD.read_text()).items():
        with contextlib.suppress(OSError):
            Path("/proc/sys", key).write_text(value + "\n")
    SYSCTL_RECORD.unlink(missing_ok=True)


# ---- everything at once -------------------------------------------------------------------------------------------


@dataclass
class NodeFootprint:
    """What of node `layout` exists on the machine right now. Empty once the node is completely gone."""

    processes: list[ProcessInfo] = field(default_factory=list)
    mounts: list[MountEntry] = field(default_factory=list)
    cgroups: list[Path] = field(default_factory=list)
    host_link: bool = False
    files: list[Path] = field(default_factory=list)

    @staticmethod
    def of(layout: NodeLayout) -> NodeFootprint:
        return NodeFootprint(
            processes=node_processes(layout),
            mounts=node_mounts(layout),
            cgroups=cgroup_dirs(layout),
            host_link=host_link_exists(layout),
            files=stray_files(layout),
        )

    def empty(self) -> bool:
        return not (self.processes or self.mounts or self.cgroups or self.host_link or self.files)


def sweep(layout: NodeLayout, owns_index: bool, timeout_s: float = 60) -> None:
    """Removes every trace of the node: kills its processes (kubelet first, so that nothing restarts a container),
    unmounts below the state directory (which frees the pods' and the node's network namespaces, and with them every
    bridge, veth and iptables rule inside), removes its cgroups, the host link and stray files.

    `owns_index`: the caller holds the node's index lock, so the index-derived names (host link, cgroup root, CNI
    result files) are this node's to remove. Without it only what carries the state directory is touched.
    """
    deadline = time.monotonic() + timeout_s
    for name in ("kubelet", "kube-proxy"):
        kill_all([p for p in node_processes(layout) if Path(p.exe).name == name], timeout_s)
    pods = [process_info(pid) for pid in cgroup_pids(layout)] if owns_index else []
    kill_all([p for p in pods if p is not None], timeout_s)
    kill_all(node_processes(layout), max(1.0, deadline - time.monotonic()))
    strays = stray_files(layout)  # before the state directory that names them goes
    unmount_all(layout)
    if owns_index:
        for path in cgroup_dirs(layout):
            wait_for(functools.partial(_rmdir_cgroup, path), max(1.0, deadline - time.monotonic()), f"rmdir {path}")
        wait_for(functools.partial(delete_host_link, layout), max(1.0, deadline - time.monotonic()),
                 f"the host link {layout.host_link} to go")  # fmt: skip
        for path in strays:
            path.unlink(missing_ok=True)
        if not other_nodes_running(layout.index):
            remove_empty_shared_dirs()
            restore_sysctls(layout.index)


def delete_host_link(layout: NodeLayout) -> bool:
    """Deletes the host end of the node's link; True once it is gone. Freeing the node's network namespace (the
    unmount in `sweep`) deletes it too, but the kernel does that later, in the background: the link can go between
    a look and `ip link del`, so a failed delete counts only if the link is still there."""
    if host_link_exists(layout):
        run(["ip", "link", "del", layout.host_link], check=False)
    return not host_link_exists(layout)


def _rmdir_cgroup(path: Path) -> bool:
    try:
        path.rmdir()
    except FileNotFoundError:
        return True
    except OSError as exc:
        if exc.errno == errno.EBUSY:  # a process is still leaving it
            return False
        raise
    return True


def remove_state(layout: NodeLayout, keep: Iterable[str] = ("logs",)) -> None:
    """Deletes the state directory's contents except `keep` (the logs, for a look after the fact). Call after
    `sweep`: a mounted directory is never deleted through (rmtree stops at a mount it cannot remove)."""
    if node_mounts(layout):
        raise OSError(f"refusing to delete {layout.state_dir}: mounts remain below it")
    if not layout.state_dir.is_dir():
        return
    for entry in layout.state_dir.iterdir():
        if entry.name in keep:
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()
