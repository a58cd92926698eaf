"""The images for real: `scripts/image.sh` (what `make image` runs) builds the Dockerfile with buildah on the
debootstrapped base, imports both images into a containerd of the test's own, and the test runs them there with
`ctr run` (containerd's default spec, runc): non-root uid 185, the services start, Java 17 runs, the evaluator jar is
where the chart looks, and nothing of the tests, the local stack or the benchmark is inside.

The build reuses .cache/image/ (a cold build takes minutes, an unchanged one seconds). The containerd, its root,
state and runc root live in the test's temporary directory; everything it starts is removed afterwards, and the test
checks that no mount, process or shim socket of it is left.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import subprocess
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from fraudstream_localstack.layout import ROOT, versions
from fraudstream_localstack.processes import ManagedProcess, wait_for

pytestmark = pytest.mark.integration

IMAGE_SCRIPT = ROOT / "scripts" / "image.sh"
IMAGES_ENV = ROOT / ".cache" / "image" / "images.env"
NAMESPACE = "k8s.io"
UID = 185
# containerd 1.6 puts every shim's socket, and ctr its FIFOs, here, whatever the daemon's configured directories.
MACHINE_DIRS = (Path("/run/containerd/s"), Path("/run/containerd/fifo"), Path("/run/containerd"))
BUILD_TIMEOUT_S = 3600


def read_env_file(path: Path) -> dict[str, str]:
    """The NAME=value lines of a shell file written with printf %q (values without spaces or quotes here)."""
    pairs = (shlex.split(line)[0].split("=", 1) for line in path.read_text().splitlines() if "=" in line)
    return {key: value for key, value in pairs}


def mountpoints_under(path: Path) -> list[str]:
    """Every mount point at or below `path`, from /proc/self/mountinfo (field 5 is the mount point)."""
    prefix = str(path)
    with open("/proc/self/mountinfo") as info:
        points = [line.split()[4].replace("\\040", " ") for line in info]
    return [p for p in points if p == prefix or p.startswith(prefix + "/")]


@dataclass(frozen=True)
class Containerd:
    """A running containerd of the test's own, driven through `ctr`."""

    address: Path
    runc_root: Path

    def ctr(self, *args: str, timeout_s: float = 300) -> subprocess.CompletedProcess[str]:
        argv = ["ctr", "--address", str(self.address), "--namespace", NAMESPACE, *args]
        return subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s, check=False)

    def run(self, image: str, *argv: str) -> subprocess.CompletedProcess[str]:
        """Runs `argv` in a new container of `image` with containerd's default spec and the image's user, and
        removes the container (and its snapshot) when it exits. The cgroup is a fresh top-level one that runc
        removes with the container."""
        name = f"fraudstream-image-test-{uuid.uuid4().hex[:12]}"
        done = self.ctr("run", "--rm", "--runc-root", str(self.runc_root), "--cgroup", f"/{name}", image, name, *argv)
        self.ctr("tasks", "kill", "--signal", "SIGKILL", name)  # only if `run` left it (it did not exit)
        self.ctr("tasks", "delete", name)
        self.ctr("containers", "delete", name)
        return done

    def names(self, kind: str) -> list[str]:
        """The names of `kind` (tasks, containers, snapshots, images) in the namespace."""
        quiet = kind != "snapshots"  # `ctr snapshots list` has no --quiet: drop its header line instead
        done = self.ctr(kind, "list", *(["--quiet"] if quiet else []))
        assert done.returncode == 0, done.stderr
        lines = [line for line in done.stdout.splitlines() if line.strip()]
        return [line.split()[0] for line in (lines if quiet else lines[1:])]


@pytest.fixture(scope="module")
def containerd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Containerd]:
    """A containerd with its root, state, socket and runc root in a temporary directory, without CRI. Afterwards:
    no task, container, image, snapshot, mount, shim socket or FIFO of it is left, and the daemon has exited."""
    base = tmp_path_factory.mktemp("containerd")
    address = base / "containerd.sock"
    config = base / "config.toml"
    config.write_text(
        f"""version = 2
root = {json.dumps(str(base / "root"))}
state = {json.dumps(str(base / "state"))}
oom_score = 0
disabled_plugins = ["io.containerd.grpc.v1.cri"]

[grpc]
  address = {json.dumps(str(address))}

[ttrpc]
  address = {json.dumps(str(address) + ".ttrpc")}

# The garbage collector's default pause threshold (2% of the time) can put off the next collection by a minute after
# a long one on a busy machine; the teardown removes images with --sync and polls for their snapshots.
[plugins."io.containerd.gc.v1.scheduler"]
  pause_threshold = 0.5
"""
    )
    existed = {path for path in MACHINE_DIRS if path.exists()}
    daemon = ManagedProcess("containerd", ["containerd", "--config", str(config)], base / "containerd.log").start()
    runtime = Containerd(address, base / "runc")
    try:
        wait_for(lambda: runtime.ctr("version").returncode == 0, 60, "containerd", watching=[daemon])
        yield runtime
    finally:
        try:
            for task in runtime.names("tasks"):
                runtime.ctr("tasks", "kill", "--signal", "SIGKILL", task)

                def deleted(t: str = task) -> bool:
                    return runtime.ctr("tasks", "delete", t).returncode == 0

                wait_for(deleted, 30, f"task {task} gone")
            for container in runtime.names("containers"):
                runtime.ctr("containers", "delete", container)
            for image in runtime.names("images"):
                runtime.ctr("images", "remove", "--sync", image)  # --sync: collect its content and snapshots now
            # A collection running concurrently may still hold some; poll until containerd has taken them all.
            wait_for(lambda: not runtime.names("snapshots"), 180, "containerd's snapshots removed")
        finally:
            daemon.stop()
            leftover = mountpoints_under(base)
            for point in sorted(leftover, reverse=True):
                subprocess.run(["umount", point], check=False)
            for path in MACHINE_DIRS:  # deepest first; only what this test created, and only when empty
                if path not in existed:
                    with contextlib.suppress(OSError):
                        path.rmdir()
        assert not leftover, f"mounts left by the test's containerd: {leftover}"
        left = [f"{p}: {os.listdir(p)}" for p in MACHINE_DIRS if p not in existed and p.exists()]
        assert not left, f"shim sockets or FIFOs left: {left}"


@pytest.fixture(scope="module")
def built(containerd: Containerd) -> dict[str, str]:
    """Both images, built (or found unchanged in buildah's layer cache) by `scripts/image.sh --containerd` and
    imported into the test's containerd by it, as `make image` imports them into the local node's; its images.env."""
    done = subprocess.run(
        [str(IMAGE_SCRIPT), "--containerd", str(containerd.address)], cwd=ROOT, capture_output=True, text=True,
        timeout=BUILD_TIMEOUT_S, check=False,
    )  # fmt: skip
    assert done.returncode == 0, f"scripts/image.sh failed:\n{done.stderr[-6000:]}"
    env = read_env_file(IMAGES_ENV)
    for prefix in ("FRAUDSTREAM_IMAGE", "FRAUDSTREAM_KAFKA_IMAGE"):
        assert Path(env[f"{prefix}_ARCHIVE"]).is_file(), env
    return env


def image_ref(built: dict[str, str], prefix: str) -> str:
    """The name containerd (and so kubelet, for the chart's `fraudstream:<tag>`) knows the image by."""
    return f"docker.io/library/{built[prefix]}"


def test_both_images_are_imported_under_their_content_addressed_tags(
    built: dict[str, str], containerd: Containerd
) -> None:
    images = containerd.names("images")
    for prefix in ("FRAUDSTREAM_IMAGE", "FRAUDSTREAM_KAFKA_IMAGE"):
        assert image_ref(built, prefix) in images, images
        assert len(built[f"{prefix}_TAG"]) == 12 and int(built[f"{prefix}_TAG"], 16) >= 0


# What the app image is checked for, in one run: who the process is, Python's version, what the virtualenv's
# site-packages holds at the top level, and every path of the file system that names the local stack, the tests or
# the benchmark.
FACTS = r"""
import json, os, sys, sysconfig
site = sysconfig.get_paths()["purelib"]
suspects = []
for top in ("/opt", "/usr", "/src", "/tmp", "/etc", "/run"):
    for dirpath, dirnames, filenames in os.walk(top):
        for name in dirnames + filenames:
            if "fraudstream_localstack" in name or "fraudstream-localstack" in name or name == "fraudstream-build":
                suspects.append(os.path.join(dirpath, name))
print(json.dumps({
    "uid": os.getuid(), "gid": os.getgid(), "python": list(sys.version_info[:2]), "site": site,
    "top_level": sorted(os.listdir(site)), "suspects": suspects, "src": os.path.exists("/src"),
    "env": {k: v for k, v in os.environ.items() if k.startswith(("FRAUDSTREAM_", "SPARK_", "JAVA_"))},
}))
"""


def test_app_image_runs_as_uid_185_and_ships_only_the_services(built: dict[str, str], containerd: Containerd) -> None:
    done = containerd.run(image_ref(built, "FRAUDSTREAM_IMAGE"), "/opt/venv/bin/python", "-c", FACTS)
    assert done.returncode == 0, done.stderr
    facts = json.loads(done.stdout)
    assert (facts["uid"], facts["gid"]) == (UID, UID)
    assert facts["site"].startswith("/opt/venv/")
    python = versions()["PYTHON_PACKAGE"].removeprefix("python")
    assert tuple(facts["python"]) == tuple(int(x) for x in python.split("."))
    top_level = set(facts["top_level"])
    for package in ("fraudstream_operator", "fraudstream_detector", "fraudstream_generator", "fraudstream_rules"):
        assert package in top_level, package
    assert not top_level & {
        "tests",
        "bench",
        "fraudstream_localstack",
        "fraudstream_dashboard",
        "fraudstream-localstack.pth",
    }, top_level
    assert facts["suspects"] == [], "local-stack code (or the build's trust-store mounts) in the image"
    assert facts["src"] is False, "the build stage's sources (tests included) must not reach the image"
    jar = facts["env"]["FRAUDSTREAM_EVALUATOR_JAR"]
    assert jar == "/opt/fraudstream/evaluator/fraudstream-evaluator.jar"
    listing = containerd.run(image_ref(built, "FRAUDSTREAM_IMAGE"), "ls", "-l", jar, "/opt/fraudstream/detector.py")
    assert listing.returncode == 0, listing.stderr


IMPORT_ALL = r"""
import importlib, pkgutil
for name in ("fraudstream_operator", "fraudstream_detector", "fraudstream_generator", "fraudstream_rules",
             "fraudstream_kafka"):
    package = importlib.import_module(name)
    for module in pkgutil.walk_packages(package.__path__, name + "."):
        if not module.name.endswith(".__main__"):
            importlib.import_module(module.name)
            print(module.name)
"""


def test_app_image_entrypoint_runs_the_services_and_java_17(built: dict[str, str], containerd: Containerd) -> None:
    """Through the image's own entrypoint (tini, then entrypoint.sh), as the chart's pods start it."""
    image = image_ref(built, "FRAUDSTREAM_IMAGE")
    entry = ["/usr/bin/tini", "--", "/opt/fraudstream/entrypoint.sh"]
    for module in ("fraudstream_detector", "fraudstream_generator"):
        done = containerd.run(image, *entry, "python", "-m", module, "--help")
        assert done.returncode == 0, f"{module}: {done.stdout[-2000:]}{done.stderr[-2000:]}"
        assert done.stdout.startswith(f"usage: {module}"), done.stdout[-2000:]
    # The operator takes its settings from the environment and has no --help: every module of every shipped package
    # must import (a subpackage left out of pyproject's `packages` is missing from the image, not from the checkout).
    done = containerd.run(image, *entry, "python", "-c", IMPORT_ALL)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "fraudstream_operator.handlers.rules" in done.stdout.split()
    java = containerd.run(image, *entry, "java", "-version")
    assert java.returncode == 0, java.stderr
    assert f'version "{versions()["JAVA_RELEASE"]}.' in java.stdout + java.stderr
    assert containerd.run(image, *entry).returncode == 64, "no command: the entrypoint's usage"


def test_kafka_image_runs_as_uid_185_with_the_broker_jars(built: dict[str, str], containerd: Containerd) -> None:
    image = image_ref(built, "FRAUDSTREAM_KAFKA_IMAGE")
    script = f'id -u; id -g; ls /opt/kafka/libs | grep -c "^kafka_{versions()["SCALA_BINARY_VERSION"]}-"; java -version'
    done = containerd.run(image, "/bin/sh", "-c", script)
    assert done.returncode == 0, done.stderr
    uid, gid, broker_jars = done.stdout.split()[:3]
    assert (int(uid), int(gid)) == (UID, UID)
    assert int(broker_jars) >= 1
    assert f'version "{versions()["JAVA_RELEASE"]}.' in done.stderr
    assert containerd.run(image, "ls", "/opt/venv").returncode != 0, "the broker image has no Python services"
