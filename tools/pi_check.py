#!/usr/bin/env python3
"""`make pi-check`: the box on an emulated Raspberry Pi, installed as a box owner installs it.

An arm64 Debian 12 (bookworm, the base of Raspberry Pi OS Bookworm) chroot runs under qemu-user
through binfmt_misc. systemd/install.sh installs the project into it exactly as a box owner
runs it, and then the box is put through what an owner and systemd would do with it:

  arm64: install.sh (fresh; no compiler in the image), the unit verified offline, `launcher
  config check`, every language, the daemon to READY as the service user and a clean SIGTERM,
  `launcher bench --mock`, the safe-off script, install.sh again (an upgrade keeps an edited
  config), install.sh --with-web after a failed first run (the venv is repaired), the all-in-one
  box (daemon and `unoattack serve` on one Pi, one move through the web API reaching the mock
  box), and the firmware and wire test suites under emulation.
  armhf (32-bit): install.sh, config check, READY, bench.

The Debian images are built with debootstrap from the mirror the host's own apt uses, once, and
cached under $PI_CHECK_CACHE (default /var/cache/unoattack-pi-check, outside the tree); an image
is rebuilt when its recipe changes (the key is a hash of the package list and IMAGE_VERSION).
Each run works on an overlay above the cached image, so the cache stays clean. Everything
mounted is unmounted on every way out; no tree with something mounted under it is ever removed.

Needs root (mounts, chroot); where binfmt_misc cannot be mounted it says so in one line and exits
2. Exit 0 when every check passed, 1 otherwise. What it cannot prove: hardware/pi-setup.md.

  tools/pi_check.py [--arch arm64|armhf ...] [--skip-suites] [--cache DIR]
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import hashlib
import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import tomllib
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

PROG = "pi-check"
TREE = Path(__file__).resolve().parents[1]
SUITE = "bookworm"
# Bump when the way an image is made changes (not for the package list: that is in the key).
IMAGE_VERSION = 1
# A Raspberry Pi OS Lite's relevant part, as far as Debian has it: Python with venv and pip,
# libgpiod's v1 tools (gpioset), ALSA's aplay, systemd (systemctl, systemd-analyze). No
# compiler: the install must not need one. (Pi OS also has pinctrl and python3-lgpio; Debian 12
# has neither, so the pip extra and the gpioset path are what is proven here.)
PACKAGES = (
    "python3",
    "python3-venv",
    "python3-pip",
    "ca-certificates",
    "gpiod",
    "alsa-utils",
    "systemd",
)
ARCHES = {"arm64": "aarch64", "armhf": "arm"}  # Debian name -> qemu's binfmt entry
LANGUAGES = ("en", "th", "zh_Hant", "ro", "cy")
CHECKOUT = "/home/pi/launcher"  # where the owner cloned the project
DEV_CHECKOUT = "/home/pi/launcher-dev"  # the suites' own copy: their build never touches CHECKOUT
DEV_VENV = "/opt/pi-check-dev"  # the test suites' venv ([dev] extra), cached per pyproject
# Every wheel pip installs on a Pi in a run, fetched once into the cache and bound here read-only.
# pip's own cache keeps nothing when the index's answers carry no caching headers (so here: a
# proxy strips them), and every run would download everything again.
WHEELS = "/var/cache/pi-check-wheels"
WHEELS_MAX_AGE_S = 7 * 24 * 3600  # then fetched again, so new releases on PyPI get tried
PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
BINFMT = Path("/proc/sys/fs/binfmt_misc")
CACHE = Path("/var/cache/unoattack-pi-check")
LOCK = Path("/run/lock/unoattack-pi-check.lock")  # one run at a time on a machine
READY_TIMEOUT_S = 120.0  # emulated start-up on a busy 2-core machine
MYPY_TEST = "tests/wire/test_types.py::test_mypy_is_clean_on_the_checked_paths"
SUITE_TIMEOUT_S = 1200  # pytest-timeout's per-test hang guard under emulation (120 natively)
TAIL_LINES = 25  # of a failed check's log, printed under it
DEBOOTSTRAP_TIMEOUT_S = 3600  # cold: 11-14 min each on a busy 2-core machine


class Failed(Exception):
    """A check did not pass; the message is its one-line reason, `log` the whole output."""

    def __init__(self, message: str, log: Path | None = None) -> None:
        super().__init__(message)
        self.log = log


class Fatal(Exception):
    """pi-check cannot run here; `code` is the exit code (2: not root, no binfmt_misc)."""

    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.code = code


def say(line: str) -> None:
    print(line, flush=True)


# --- the host: root, tools, binfmt_misc, the mirror ---------------------------------------------


def apt_mirror(
    apt: Path = Path("/etc/apt"), os_release: Path = Path("/etc/os-release")
) -> str | None:
    """The Debian mirror the host's own apt uses: the URI of the source of the host's own
    Debian release (its codename as a suite: not -security or -updates), from sources.list and
    sources.list.d in either format. Read at run time; no mirror is written into the tree. None
    on a host that is not Debian (a CI runner on Ubuntu): debootstrap then uses its own default."""
    release = dict(line.split("=", 1) for line in _read(os_release).splitlines() if "=" in line)
    codename = release.get("VERSION_CODENAME", "").strip('"')
    if release.get("ID", "").strip('"') != "debian" or not codename:
        return None
    for path in [apt / "sources.list", *sorted((apt / "sources.list.d").glob("*"))]:
        text = _read(path)
        if path.suffix == ".sources":
            entries = _deb822_entries(text)
        elif path.suffix == ".list" or path.name == "sources.list":
            entries = _one_line_entries(text)
        else:
            continue
        for uris, suites in entries:
            if codename in suites:
                for uri in uris:
                    if uri.startswith(("http://", "https://")):
                        return uri.rstrip("/")
    raise Fatal(
        f"{PROG}: no source of {codename} in {apt}/sources.list(.d); set PI_CHECK_MIRROR to a "
        "Debian mirror",
        2,
    )


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""


def _deb822_entries(text: str) -> list[tuple[list[str], list[str]]]:
    entries = []
    for stanza in re.split(r"\n\s*\n", text):
        fields: dict[str, str] = {}
        for line in stanza.splitlines():
            if line.startswith("#") or ":" not in line or line[:1].isspace():
                continue
            key, value = line.split(":", 1)
            fields[key.strip().lower()] = value.strip()
        if "deb" in fields.get("types", "").split() and fields.get("enabled", "yes") != "no":
            entries.append((fields.get("uris", "").split(), fields.get("suites", "").split()))
    return entries


def _one_line_entries(text: str) -> list[tuple[list[str], list[str]]]:
    entries = []
    for line in text.splitlines():
        words = re.sub(r"\[[^]]*\]", " ", line.split("#", 1)[0]).split()
        if len(words) >= 3 and words[0] == "deb":
            entries.append(([words[1]], [words[2]]))
    return entries


def image_key(arch: str) -> str:
    """What an image is made of, hashed: rebuilt when any of it changes."""
    recipe = json.dumps([IMAGE_VERSION, SUITE, arch, sorted(PACKAGES)])
    return hashlib.sha256(recipe.encode()).hexdigest()[:12]


def need_root() -> None:
    if os.geteuid() != 0:
        raise Fatal(
            f"{PROG}: needs root (it mounts binfmt_misc and a chroot): sudo make pi-check", 2
        )


def install_host_tools(arches: list[str]) -> None:
    """debootstrap, qemu-user-static and binfmt-support, with apt-get when missing."""
    tools = ["debootstrap", "update-binfmts", *(f"qemu-{ARCHES[a]}-static" for a in arches)]
    keyring = Path("/usr/share/keyrings/debian-archive-keyring.gpg")  # checks Debian's archive
    if all(shutil.which(t) for t in tools) and keyring.exists():
        return
    packages = "qemu-user-static debootstrap binfmt-support debian-archive-keyring"
    if not shutil.which("apt-get"):
        raise Fatal(f"{PROG}: needs {packages} (not a Debian host: install them by hand)", 2)
    say(f"{PROG}: installing {packages} on the host")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for cmd in (
        ["apt-get", "update", "-qq"],
        ["apt-get", "install", "-y", "-qq", *packages.split()],
    ):
        done = subprocess.run(cmd, env=env, capture_output=True, text=True)
        if done.returncode != 0:
            raise Fatal(f"{PROG}: {' '.join(cmd)} failed: {_last(done.stderr)}")


def run_bounded(
    argv: list[str], *, timeout: float, stopping: threading.Event
) -> tuple[subprocess.CompletedProcess[str], bool]:
    """`argv` in a session of its own, its output captured in files, not pipes (a process it
    leaves behind, such as a test's daemon in a session of its own, cannot keep this waiting
    for the end of a pipe); killed with its session after `timeout` s or once `stopping` is
    set. (what it did, whether it ended by itself)"""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=out, stderr=err, start_new_session=True
        )
        deadline = time.monotonic() + timeout
        while proc.poll() is None and time.monotonic() < deadline:
            if stopping.wait(min(1.0, max(0.0, deadline - time.monotonic()))):
                break
        ended = proc.poll() is not None
        if not ended:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        out.seek(0)
        err.seek(0)
        text = [f.read().decode(errors="replace") for f in (out, err)]
    return subprocess.CompletedProcess(argv, proc.returncode, *text), ended


# --- mounts, and never removing a tree with something mounted in it -----------------------------


def mounts_under(path: Path) -> list[str]:
    """Mount points at or below `path`, deepest first (from /proc/self/mountinfo)."""
    base = os.path.realpath(path)
    found = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        point = line.split()[4].encode().decode("unicode_escape")
        if point == base or point.startswith(base + "/"):
            found.append(point)
    return sorted(set(found), key=len, reverse=True)


def remove_tree(path: Path) -> None:
    """rm -rf, after unmounting whatever a crashed run left mounted below `path`; refuses when
    something stays mounted (a bound /dev must never be emptied)."""
    if not path.exists() and not path.is_symlink():
        return
    for point in mounts_under(path):
        subprocess.run(["umount", "-R", point], capture_output=True)
    for point in mounts_under(path):
        subprocess.run(["umount", "-l", "-R", point], capture_output=True)
    left = mounts_under(path)
    if left:
        raise Fatal(f"{PROG}: {left[0]} is still mounted; not removing {path}")
    shutil.rmtree(path)


class Mounts:
    """What this run mounted, unmounted in reverse order on the way out."""

    def __init__(self) -> None:
        self.points: list[Path] = []

    def mount(self, *args: str, target: Path) -> None:
        target.mkdir(parents=True, exist_ok=True)
        done = subprocess.run(["mount", *args, str(target)], capture_output=True, text=True)
        if done.returncode != 0:
            raise Fatal(f"{PROG}: mount {' '.join(args)} {target}: {_last(done.stderr)}")
        self.points.append(target)

    def unmount(self, target: Path) -> None:
        """Unmount one point this run mounted (and what is mounted below it)."""
        done = subprocess.run(["umount", "-R", str(target)], capture_output=True, text=True)
        if done.returncode != 0:
            raise Fatal(f"{PROG}: umount {target}: {_last(done.stderr)}")
        self.points.remove(target)

    def unmount_all(self) -> list[str]:
        """Unmount everything, newest first; returns what could not be unmounted."""
        stuck = []
        while self.points:
            point = self.points.pop()
            if not mounts_under(point):
                continue
            if subprocess.run(["umount", "-R", str(point)], capture_output=True).returncode:
                time.sleep(0.5)  # a process that was just killed may still hold it
                if subprocess.run(["umount", "-R", str(point)], capture_output=True).returncode:
                    subprocess.run(["umount", "-l", "-R", str(point)], capture_output=True)
                    stuck.append(str(point))
        return stuck


def enable_binfmt(arches: list[str], mounts: Mounts) -> None:
    """binfmt_misc mounted (by us if it is not) and qemu's entries for `arches` enabled."""
    if not (BINFMT / "register").exists():
        done = subprocess.run(
            ["mount", "-t", "binfmt_misc", "binfmt_misc", str(BINFMT)],
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            raise Fatal(
                f"{PROG}: cannot mount binfmt_misc ({_last(done.stderr) or 'refused'}); "
                "it needs root on a kernel with binfmt_misc, outside an unprivileged container",
                2,
            )
        mounts.points.append(BINFMT)
    for arch in arches:
        entry = f"qemu-{ARCHES[arch]}"
        if not (BINFMT / entry).exists():
            subprocess.run(["update-binfmts", "--enable", entry], capture_output=True)
        if not (BINFMT / entry).exists() or "enabled" not in (BINFMT / entry).read_text():
            raise Fatal(f"{PROG}: cannot enable the {entry} binfmt entry (update-binfmts)", 2)


# --- the cached images --------------------------------------------------------------------------


def image(
    cache: Path, arch: str, mirror: Callable[[], str | None], stopping: threading.Event
) -> tuple[Path, str]:
    """The cached Debian image for `arch`, built when missing or stale: (path, what was done)."""
    images = cache / "images"
    images.mkdir(parents=True, exist_ok=True)
    name = f"{SUITE}-{arch}-{image_key(arch)}"
    final = images / name
    if (final / ".pi-check-image").exists():
        return final, f"cached {name}"
    for old in sorted(images.glob(f"*{SUITE}-{arch}-*")):
        remove_tree(old)  # stale recipes, half-built ones
    building = images / f".building-{name}"
    cmd = [
        "debootstrap",
        f"--arch={arch}",
        "--variant=minbase",
        f"--include={','.join(PACKAGES)}",
        SUITE,
        str(building),
        *filter(None, [mirror()]),
    ]
    done, ended = run_bounded(cmd, timeout=DEBOOTSTRAP_TIMEOUT_S, stopping=stopping)
    for point in mounts_under(building):  # debootstrap mounts /proc and /sys while it works
        subprocess.run(["umount", "-l", point], capture_output=True)
    if not ended or done.returncode != 0:
        log = cache / "logs" / f"debootstrap-{arch}.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        log.write_text(done.stdout + done.stderr)
        why = f"exited {done.returncode}" if ended else "stopped, or timed out"
        raise Failed(f"debootstrap {why}: {_last(done.stdout + done.stderr)} (log: {log})", log)
    (building / ".pi-check-image").write_text(
        json.dumps({"key": image_key(arch), "packages": PACKAGES, "built": time.time()})
    )
    building.rename(final)
    return final, f"built {name}"


def dev_requirements() -> list[str]:
    """The project's dependencies and its [dev] extra: what the test suites need."""
    project = tomllib.loads((TREE / "pyproject.toml").read_text())["project"]
    return [*project["dependencies"], *project["optional-dependencies"]["dev"]]


def pip_requirements(arch: str) -> list[str]:
    """Everything pip installs on the Pi of `arch` in a run: the build backend (install.sh
    builds the checkout), the dependencies and the pi extra; on arm64 also the web extra
    (install.sh --with-web) and the dev extra (the test suites)."""
    pyproject = tomllib.loads((TREE / "pyproject.toml").read_text())
    project, extras = pyproject["project"], pyproject["project"]["optional-dependencies"]
    wanted = [*pyproject["build-system"]["requires"], *project["dependencies"], *extras["pi"]]
    if arch == "arm64":
        wanted += [*extras["web"], *extras["dev"]]
    return sorted(set(wanted))


def tree_files() -> list[str]:
    """The files of this tree an owner's clone has: tracked, and new ones not ignored."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=TREE,
        capture_output=True,
    )
    if listed.returncode != 0:
        raise Fatal(f"{PROG}: {TREE} is not a git checkout")
    names = set(listed.stdout.decode().split("\0")) - {""}
    return sorted(n for n in names if (TREE / n).is_file())  # (not a deleted, unstaged one)


# What a build or a run leaves in a checkout and sync_checkout keeps: Python's compiled modules
# (pytest's rewritten tests among them), the catalogs, the editable install's metadata.
BUILT = re.compile(r"(^|/)__pycache__/|\.mo$|^[^/]+\.egg-info/|^build/|^\.mypy_cache/")


def sync_checkout(dest: Path) -> tuple[int, int]:
    """Make `dest` hold this tree's files: copy those that are new or differ in size or mtime
    (copied with their mtime, so a compiled module of an unchanged file stays valid), remove
    the files the tree does not have but for what a build made (BUILT); a test's leftovers
    (.hypothesis/ ...) go too. (files copied, files removed)"""
    names = tree_files()
    copied = 0
    for name in names:
        src, dst = (TREE / name).stat(), dest / name
        with contextlib.suppress(FileNotFoundError):
            have = dst.stat()
            if (have.st_size, have.st_mtime_ns) == (src.st_size, src.st_mtime_ns):
                continue
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(TREE / name, dst)
        copied += 1
    wanted, removed = set(names), 0
    for path in sorted(dest.rglob("*"), reverse=True):  # a folder after what is in it
        name = path.relative_to(dest).as_posix()
        if path.is_dir() and not path.is_symlink():
            if not any(path.iterdir()):
                path.rmdir()
        elif name not in wanted and not BUILT.search(name):
            path.unlink()
            removed += 1
    return copied, removed


def build_inputs_key() -> str:
    """What an editable install of the tree depends on, hashed: its metadata and build step
    (pyproject.toml, setup.py) and the catalogs the build step compiles (i18n/)."""
    digest = hashlib.sha256()
    for name in tree_files():
        if name in ("pyproject.toml", "setup.py") or name.startswith("i18n/"):
            digest.update(name.encode() + b"\0" + (TREE / name).read_bytes())
    return digest.hexdigest()[:12]


def wheels_key(arch: str) -> str:
    """What a wheelhouse holds, hashed: fetched again when any of it changes."""
    recipe = json.dumps([image_key(arch), pip_requirements(arch)])
    return hashlib.sha256(recipe.encode()).hexdigest()[:12]


# --- a chroot on an overlay above the image -----------------------------------------------------


@dataclass
class Ids:
    uid: int
    gid: int
    groups: list[int] = field(default_factory=list)


class Pi:
    """One emulated Pi: the overlay root, its mounts and the processes started in it."""

    def __init__(self, cache: Path, arch: str, base: Path, mounts: Mounts) -> None:
        self.arch = arch
        self.mounts = mounts
        self.run_dir = cache / "runs" / arch
        self.root = self.run_dir / "root"
        self.cache = cache
        self.base = base
        self.children: list[subprocess.Popen] = []
        self.pip_env: dict[str, str] = {}  # how every pip in the Pi finds its wheels
        self.wheels_id = ""  # which wheelhouse: its name and when it was fetched
        self.stopping = threading.Event()  # set on Ctrl-C or SIGTERM: start nothing more

    def start(self) -> str:
        """Mount the overlay and what a running system has (proc, sys, dev), copy the checkout
        in; what it did, in a few words."""
        remove_tree(self.run_dir)
        shutil.rmtree(self.cache / "logs" / self.arch, ignore_errors=True)
        for part in ("upper", "work", "root"):
            (self.run_dir / part).mkdir(parents=True)
        self.mounts.mount(
            "-t",
            "overlay",
            "overlay",
            "-o",
            f"lowerdir={self.base},upperdir={self.run_dir / 'upper'},"
            f"workdir={self.run_dir / 'work'}",
            target=self.root,
        )
        r = self.root
        self.mounts.mount("-t", "proc", "proc", target=r / "proc")
        self.mounts.mount("--rbind", "/sys", target=r / "sys")
        subprocess.run(["mount", "--make-rslave", str(r / "sys")], check=True)
        self.mounts.mount("--bind", "/dev", target=r / "dev")
        self.mounts.mount("--bind", "/dev/pts", target=r / "dev/pts")
        self.mounts.mount("--bind", "/dev/shm", target=r / "dev/shm")
        # Name resolution, the host's trust store (a proxy's own CA, where the host's network
        # has one) and its pip configuration, so pip reaches the same index the same way.
        shutil.copy2("/etc/resolv.conf", r / "etc/resolv.conf", follow_symlinks=True)
        bundle = Path("/etc/ssl/certs/ca-certificates.crt")
        if bundle.exists():
            shutil.copy2(bundle, r / str(bundle).lstrip("/"), follow_symlinks=True)
        for conf in (Path("/etc/pip.conf"), Path("/etc/xdg/pip")):
            if conf.is_dir():
                shutil.copytree(conf, r / str(conf).lstrip("/"), dirs_exist_ok=True)
            elif conf.exists():
                shutil.copy2(conf, r / str(conf).lstrip("/"))
        files = self.copy_checkout(CHECKOUT)
        return f"{self.root}; the checkout ({files} files) in {CHECKOUT}"

    def copy_checkout(self, where: str) -> int:
        """The project as the owner's clone has it: the tracked and new files of this tree
        (nothing `make` built: no .mo catalogs, no venv)."""
        dest = self.root / where.lstrip("/")
        for name in tree_files():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(TREE / name, dest / name)
        return len(tree_files())

    def mount_dev_venv(self) -> Path:
        """The suites' venv, cached outside the overlay and made again when the wheels change
        (other requirements, or fetched again)."""
        key = hashlib.sha256(json.dumps([dev_requirements(), self.wheels_id]).encode())
        venvs = self.cache / "dev-venv"
        path = venvs / f"{self.arch}-{key.hexdigest()[:12]}"
        if not path.exists():
            for old in venvs.glob(f"{self.arch}-*"):
                remove_tree(old)
        path.mkdir(parents=True, exist_ok=True)
        self.mounts.mount("--bind", str(path), target=self.root / DEV_VENV.lstrip("/"))
        return path

    def mount_dev_checkout(self) -> tuple[int, int]:
        """The suites' checkout, kept in the cache between runs and brought in line with the
        tree (sync_checkout), so what Python compiled there last time (the modules, pytest's
        rewritten tests) is used again; bound at DEV_CHECKOUT. (files copied, files removed)"""
        path = self.cache / "dev-checkout" / self.arch
        path.mkdir(parents=True, exist_ok=True)
        changed = sync_checkout(path)
        self.mounts.mount("--bind", str(path), target=self.root / DEV_CHECKOUT.lstrip("/"))
        return changed

    def wheelhouse(self) -> str:
        """Every wheel pip installs in this run, fetched once into the cache (built by `pip
        wheel` in the Pi: no compiler there, so a requirement without a wheel fails here as it
        would on a Pi), keyed by the requirements and fetched again after a week. Then bound
        read-only at WHEELS, and every pip in the Pi installs from it alone (PIP_NO_INDEX,
        PIP_FIND_LINKS: what an owner's pip.conf can say too): install.sh runs as it is, and a
        warm run downloads nothing."""
        houses = self.cache / "wheels"
        name = f"{self.arch}-{wheels_key(self.arch)}"
        final = houses / name
        done = final / ".pi-check-wheels"
        what = "cached"
        if not done.exists() or time.time() - done.stat().st_mtime > WHEELS_MAX_AGE_S:
            what = "fetched"
            for old in sorted(houses.glob(f"*{self.arch}-*")):
                remove_tree(old)  # other requirements, too old, half-fetched
            building = houses / f".fetching-{name}"
            building.mkdir(parents=True)
            target = self.root / WHEELS.lstrip("/")
            self.mounts.mount("--bind", str(building), target=target)
            self.write("/tmp/pi-check-requirements.txt", "\n".join(pip_requirements(self.arch)))
            self.ok(
                f"python3 -m pip wheel --quiet --wheel-dir {WHEELS} "
                "-r /tmp/pi-check-requirements.txt",
                "pip wheel (the wheelhouse)",
                timeout=3600,
            )
            self.mounts.unmount(target)
            (building / ".pi-check-wheels").write_text(json.dumps(pip_requirements(self.arch)))
            building.rename(final)
        self.mounts.mount("--bind", "-o", "ro", str(final), target=self.root / WHEELS.lstrip("/"))
        self.pip_env = {"PIP_NO_INDEX": "1", "PIP_FIND_LINKS": WHEELS}
        self.wheels_id = f"{name}@{done.stat().st_mtime_ns}"
        wheels = len(list(final.glob("*.whl")))
        return f"{what} {wheels} wheels ({final}); pip in the Pi installs from them alone"

    # -- running things inside ----------------------------------------------------------------

    def ids(self, user: str, extra_groups: tuple[str, ...] = ()) -> Ids:
        """A user's uid, gid and groups from the Pi's own files (initgroups, as systemd does)."""
        passwd = {f[0]: f for f in (ln.split(":") for ln in self.read("/etc/passwd").splitlines())}
        if user not in passwd:
            raise Failed(f"no user {user!r} on the Pi")
        groups = [ln.split(":") for ln in self.read("/etc/group").splitlines()]
        member = [
            int(g[2])
            for g in groups
            if user in g[3].split(",") or g[0] in extra_groups or g[2] == passwd[user][3]
        ]
        return Ids(int(passwd[user][2]), int(passwd[user][3]), sorted(set(member)))

    def argv(self, cmd: list[str], *, ids: Ids | None, env: dict[str, str] | None) -> list[str]:
        base = {"PATH": PATH, "HOME": "/root", "LANG": "C.UTF-8", "SYSTEMD_OFFLINE": "1"}
        for name in ("PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_TRUSTED_HOST", "PIP_CERT"):
            if name in os.environ:
                base[name] = os.environ[name]
        for name in ("http_proxy", "https_proxy", "no_proxy", "HTTP_PROXY", "HTTPS_PROXY"):
            if name in os.environ:
                base[name] = os.environ[name]
        base["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
        base.update(self.pip_env)
        base["PIP_DEFAULT_TIMEOUT"] = os.environ.get("PIP_DEFAULT_TIMEOUT", "120")
        if ids is not None:
            base["HOME"] = "/nonexistent"
        base.update(env or {})
        user = []
        if ids is not None:
            user = [f"--userspec={ids.uid}:{ids.gid}", f"--groups={','.join(map(str, ids.groups))}"]
        return [
            "chroot",
            *user,
            str(self.root),
            "/usr/bin/env",
            "-i",
            *(f"{k}={v}" for k, v in base.items()),
            *cmd,
        ]

    def sh(
        self,
        script: str,
        *,
        what: str = "",
        ids: Ids | None = None,
        env: dict[str, str] | None = None,
        timeout: float = 300,
    ) -> subprocess.CompletedProcess[str]:
        """Run a bash script inside (as root, or as `ids`); output captured (run_bounded)."""
        if self.stopping.is_set():
            raise Failed("not run: pi-check was stopped")
        argv = self.argv(["/bin/bash", "-c", script], ids=ids, env=env)
        done, ended = run_bounded(argv, timeout=timeout, stopping=self.stopping)
        if not ended:
            why = (
                "stopped (pi-check was interrupted)"
                if self.stopping.is_set()
                else (f"timed out after {timeout:g} s")
            )
            raise self.failed(what or script.split()[0], done, why)
        return done

    def ok(self, script: str, what: str, **kw) -> str:
        """`sh`, failing the check unless it exits 0; returns stdout."""
        done = self.sh(script, what=what, **kw)
        if done.returncode != 0:
            raise self.failed(what, done)
        return done.stdout

    def failed(self, what: str, done: subprocess.CompletedProcess[str], why: str = "") -> Failed:
        """A Failed naming the last line said, the whole output kept in a log file."""
        logs = self.cache / "logs" / self.arch
        logs.mkdir(parents=True, exist_ok=True)
        log = logs / (re.sub(r"[^\w.-]+", "-", what).strip("-")[:60] + ".log")
        log.write_text(f"$ {done.args[-1]}\n{done.stdout}\n--- stderr\n{done.stderr}")
        last = _last(done.stderr or done.stdout)
        why = why or f"exited {done.returncode}"
        return Failed(f"{what} {why}: {last} (whole output: {log})", log)

    def spawn(self, cmd: list[str], *, ids: Ids | None, env: dict[str, str] | None) -> Process:
        """Start a long-running command inside; its output is collected as it comes."""
        proc = subprocess.Popen(
            self.argv(cmd, ids=ids, env=env),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
        self.children.append(proc)
        return Process(proc)

    def read(self, path: str) -> str:
        return (self.root / path.lstrip("/")).read_text(encoding="utf-8")

    def write(self, path: str, text: str) -> None:
        (self.root / path.lstrip("/")).write_text(text, encoding="utf-8")

    def stop(self) -> None:
        """End every process started inside (ours, and anything they left behind)."""
        for proc in self.children:
            if proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(10)
        root = os.path.realpath(self.root)
        for pid in (p for p in os.listdir("/proc") if p.isdigit()):
            with contextlib.suppress(OSError):
                if os.readlink(f"/proc/{pid}/root") == root:
                    os.kill(int(pid), signal.SIGKILL)


class Process:
    """A process started in the Pi, its output gathered by a thread."""

    def __init__(self, proc: subprocess.Popen) -> None:
        self.proc = proc
        self.lines: list[str] = []
        self._ended = False  # its output is closed: no more lines will come
        self._changed = threading.Condition()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            with self._changed:
                self.lines.append(line.rstrip("\n"))
                self._changed.notify_all()
        with self._changed:
            self._ended = True
            self._changed.notify_all()

    def wait_line(self, pattern: str, timeout: float) -> re.Match[str]:
        """The first output line matching `pattern`; Failed when none comes in time."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                for line in self.lines:
                    found = re.search(pattern, line)
                    if found:
                        return found
                left = deadline - time.monotonic()
                if self._ended or left <= 0:
                    break
                self._changed.wait(left)
        raise Failed(f"no line matching {pattern!r} (output: {self.tail()})")

    def terminate(self, timeout: float = 60) -> int:
        """SIGTERM, and the exit code (Failed if it does not end in time)."""
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            raise Failed(f"still running {timeout:g} s after SIGTERM") from None

    def tail(self, n: int = 3) -> str:
        return " | ".join(self.lines[-n:]) or "nothing"


class Notify:
    """A systemd notify socket (abstract namespace: reachable from inside the chroot)."""

    def __init__(self) -> None:
        self.name = f"pi-check-{os.getpid()}-{time.monotonic_ns()}"
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind("\0" + self.name)
        self.messages: list[str] = []

    @property
    def env(self) -> dict[str, str]:
        return {"NOTIFY_SOCKET": "@" + self.name, "WATCHDOG_USEC": "5000000"}

    def wait(self, assignment: str, timeout: float) -> float:
        """Seconds until a datagram carries `assignment` (READY=1, WATCHDOG=1, ...)."""
        start = time.monotonic()
        while not any(assignment in m.split("\n") for m in self.messages):
            left = timeout - (time.monotonic() - start)
            if left <= 0:
                raise Failed(f"no {assignment} within {timeout:g} s")
            self.sock.settimeout(left)
            with contextlib.suppress(TimeoutError):
                self.messages.append(self.sock.recv(4096).decode())
        return time.monotonic() - start

    def drain(self) -> None:
        """Take what has arrived since the last wait (STOPPING=1 after a SIGTERM)."""
        self.sock.setblocking(False)
        with contextlib.suppress(BlockingIOError):
            while True:
                self.messages.append(self.sock.recv(4096).decode())

    def close(self) -> None:
        self.sock.close()


# --- the checks ---------------------------------------------------------------------------------


@dataclass
class Result:
    name: str
    ok: bool
    seconds: float
    detail: str
    load: str = field(default_factory=lambda: load())  # the machine's, as the check ended


class Checks:
    """Runs checks, prints each as it ends (arm64 and armhf run side by side: the installs are
    single-threaded, the machine has two cores), keeps the results."""

    def __init__(self) -> None:
        self.results: list[Result] = []
        self.stopping = threading.Event()  # Ctrl-C or SIGTERM: run nothing more
        self._lock = threading.Lock()

    def run(self, arch: str, name: str, check: Callable[[], str]) -> bool:
        if self.stopping.is_set():
            return self._record(arch, name, False, 0.0, "not run (pi-check was stopped)")
        start = time.monotonic()
        log = None
        try:
            detail, ok = check(), True
        except Failed as exc:
            detail, ok, log = str(exc), False, exc.log
        except (OSError, subprocess.SubprocessError, Fatal) as exc:
            detail, ok = f"{type(exc).__name__}: {exc}", False
        return self._record(arch, name, ok, time.monotonic() - start, detail, log)

    def _record(
        self, arch: str, name: str, ok: bool, seconds: float, detail: str, log: Path | None = None
    ) -> bool:
        with self._lock:
            self.results.append(Result(f"{arch}: {name}", ok, seconds, detail))
            say(f"  {'pass' if ok else 'FAIL'} {seconds:6.1f} s  {arch:5}  {name}: {detail}")
            if log is not None:  # what it said last, where a CI log shows it
                say(f"         the end of {log}:")
                for line in _read(log).rstrip().splitlines()[-TAIL_LINES:]:
                    say(f"         | {line}")
        return ok

    def note(self, arch: str, text: str) -> None:
        with self._lock:
            say(f"  note            {arch:5}  {text}")


INSTALL = f"bash {CHECKOUT}/systemd/install.sh"
VENV = "/opt/launcher/venv"
CONFIG = "/etc/launcher/launcher.toml"
UNIT_DIR = "/etc/systemd/system"


class Unit:
    """A unit as installed on the Pi, its drop-ins applied: what systemd would run, and how."""

    def __init__(self, pi: Pi, name: str) -> None:
        self.name = name
        text = pi.read(f"{UNIT_DIR}/{name}")
        dropins = pi.root / UNIT_DIR.lstrip("/") / f"{name}.d"
        for conf in sorted(dropins.glob("*.conf")) if dropins.is_dir() else []:
            text += "\n" + conf.read_text()
        self.text = text

    def values(self, key: str) -> list[str]:
        """Every value of `key` in order; an empty assignment resets the list, as in systemd."""
        values: list[str] = []
        for line in self.text.splitlines():
            if line.startswith(f"{key}="):
                value = line.split("=", 1)[1]
                values = [*values, value] if value else []
        return values

    def last(self, key: str, default: str = "") -> str:
        return (self.values(key) or [default])[-1]

    def environment(self, pi: Pi) -> dict[str, str]:
        """Environment= in order, then EnvironmentFile= (which overrides it)."""
        env: dict[str, str] = {}
        for value in self.values("Environment"):
            env.update(item.split("=", 1) for item in shlex.split(value))
        for value in self.values("EnvironmentFile"):
            path = value.lstrip("-")
            if (pi.root / path.lstrip("/")).exists():
                for line in pi.read(path).splitlines():
                    if "=" in line and not line.lstrip().startswith("#"):
                        key, val = line.split("=", 1)
                        env[key.strip()] = val.strip()
        return env

    def argv(self, env: dict[str, str]) -> list[str]:
        """ExecStart, with ${NAME} replaced from `env` as systemd does."""
        words = shlex.split(self.last("ExecStart"))
        return [re.sub(r"\$\{(\w+)\}", lambda m: env[m.group(1)], w) for w in words]


def start_service(pi: Pi, unit: Unit, ids: Ids, env: dict[str, str]) -> Process:
    """ExecStart as systemd would start it here: its State/RuntimeDirectory made with their
    modes and owner, its WorkingDirectory and UMask, the user and groups `ids`. Not its
    sandbox: no systemd runs in the chroot (hardware/pi-setup.md)."""
    for kind, base in (("State", "/var/lib"), ("Runtime", "/run")):
        for name in unit.last(f"{kind}Directory").split():
            mode = unit.last(f"{kind}DirectoryMode", "0755")
            path = f"{base}/{name}"
            pi.ok(f"install -d -m {mode} -o {ids.uid} -g {ids.gid} {path}", f"mkdir {path}")
    script = 'cd "$1" && umask "$2" && shift 2 && exec "$@"'
    cwd, umask = unit.last("WorkingDirectory", "/"), unit.last("UMask", "0022")
    return pi.spawn(["/bin/sh", "-c", script, "sh", cwd, umask, *unit.argv(env)], ids=ids, env=env)


# The simulated lgpio chip under gpiozero's own LGPIOFactory (tests/simchip, hardware/gpio.md):
# `VENV/bin/python CHECKOUT/tests/simchip ARGS` is the installed `launcher ARGS` on that chip.
SIMCHIP = "tests/simchip"


def has_simchip(pi: Pi) -> bool:
    return (pi.root / CHECKOUT.lstrip("/") / SIMCHIP / "__main__.py").exists()


def on_simchip(argv: list[str]) -> list[str]:
    """`launcher ARGS` (the venv's) as the same launcher on the simulated chip."""
    return [str(Path(argv[0]).parent / "python"), f"{CHECKOUT}/{SIMCHIP}", *argv[1:]]


def start_daemon(pi: Pi, notify: Notify, *, simchip: bool = False) -> tuple[Process, float]:
    """launcher.service's daemon as the unit starts it, on mock pins (or on the simulated
    lgpio chip); (process, seconds to READY=1)."""
    unit = Unit(pi, "launcher.service")
    env = {**unit.environment(pi), **notify.env}
    if simchip:
        unit.text += f"\nExecStart={shlex.join(on_simchip(unit.argv(env)))}\n"
    else:
        env["GPIOZERO_PIN_FACTORY"] = "mock"
    daemon = start_service(pi, unit, pi.ids(unit.last("User")), env)
    try:
        seconds = notify.wait("READY=1", READY_TIMEOUT_S)
    except Failed as exc:
        daemon.terminate()
        raise Failed(f"{exc}; daemon said: {daemon.tail()}") from None
    return daemon, seconds


def stop_daemon(daemon: Process, notify: Notify) -> str:
    """SIGTERM; the daemon must end 0 with every output off."""
    code = daemon.terminate()
    if code != 0:
        raise Failed(f"exit {code} after SIGTERM: {daemon.tail()}")
    outputs = daemon.wait_line(r"outputs at exit: (.*)", 5).group(1)
    on = [o for o in outputs.split() if not o.endswith("=0")]
    if on:
        raise Failed(f"outputs left on at exit: {' '.join(on)}")
    notify.drain()
    if not any("STOPPING=1" in m.split("\n") for m in notify.messages):
        raise Failed("no STOPPING=1 on the way out")
    return "exit 0, every output off"


def check_fresh_install(pi: Pi) -> str:
    """install.sh on a Pi without a compiler: the [pi] extra must come as wheels."""
    compilers = pi.sh("command -v gcc cc c99 clang", timeout=60).stdout.split()
    if compilers:
        raise Failed(f"the image has a compiler ({' '.join(compilers)}): it proves nothing")
    pi.ok(INSTALL, "install.sh", timeout=1200)
    wheels = pi.ok(
        f"{VENV}/bin/python -m pip list --format=freeze | grep -iE '^(lgpio|gpiozero|RPi.GPIO)='",
        "pip list",
        timeout=120,
    ).split()
    pi.ok(f"{VENV}/bin/python -c 'import lgpio'", "import lgpio (the Pi's pin factory)")
    return f"no compiler in the image; {', '.join(wheels)} in the venv; lgpio imports"


def check_unit(pi: Pi) -> str:
    out = pi.ok(
        f"systemd-analyze verify --man=no {UNIT_DIR}/launcher.service 2>&1 && "
        f"systemd-analyze security --offline=true --no-pager {UNIT_DIR}/launcher.service",
        "systemd-analyze",
        timeout=180,
    )
    found = re.search(r"Overall exposure level for launcher\.service: (\S+ \S+)", out)
    return f"verifies; exposure {found.group(1) if found else '?'}"


def check_config(pi: Pi) -> str:
    out = pi.ok(f"{VENV}/bin/launcher config check {CONFIG}", "config check", timeout=120)
    return out.splitlines()[0] if out else "OK"


def check_languages(pi: Pi) -> str:
    """Every language answers in its own words, by --lang and by the box's locale."""
    runs = [(lang, f"--lang {lang}", "") for lang in LANGUAGES]
    runs += [
        (lang, "", f"LANG={lang}_{where}.UTF-8") for lang, where in (("ro", "RO"), ("cy", "GB"))
    ]
    script = "; ".join(
        f"echo '@@ {lang} {opt or env}'; {env} {VENV}/bin/launcher {opt} config check {CONFIG}"
        ' 2>&1; echo "@@ exit $?"'
        for lang, opt, env in runs
    )
    out = pi.ok(script, "launcher", timeout=600)
    answers = []  # (language, how asked, what it said, exit code)
    for block in out.split("@@ ")[1:]:
        head, _, text = block.partition("\n")
        if head.startswith("exit "):
            answers[-1] = (*answers[-1][:3], head.split()[1])
        else:
            lang, how = head.split(" ", 1)
            answers.append((lang, how, text, ""))
    english = next(text for lang, _how, text, _code in answers if lang == "en")
    bad = [
        f"{how}: exit {code} {_last(text)}"
        for lang, how, text, code in answers
        if code != "0" or (lang != "en") == (text == english)
    ]
    if bad or len(answers) != len(runs):
        raise Failed("; ".join(bad) or f"{len(answers)} of {len(runs)} answered")
    return f"{len(runs)} runs, each in its own language ({', '.join(LANGUAGES)}; LANG=ro, cy)"


def check_ready(pi: Pi, *, simchip: bool = False) -> str:
    notify = Notify()
    try:
        daemon, seconds = start_daemon(pi, notify, simchip=simchip)
        notify.wait("WATCHDOG=1", 30)
        stopped = stop_daemon(daemon, notify)
    finally:
        notify.close()
    return f"READY in {seconds:.1f} s as user launcher; watchdog pinged; SIGTERM: {stopped}"


def check_bench(pi: Pi, *, simchip: bool = False) -> str:
    argv = [f"{VENV}/bin/launcher", "bench", "--config", CONFIG, "--presses", "10"]
    argv = on_simchip(argv) if simchip else [*argv, "--mock"]
    out = pi.ok(shlex.join(argv), "launcher bench", timeout=600)
    return out.splitlines()[0]  # bench: N presses (fire mode), N cards of N planned in T s


def check_safe_off(pi: Pi) -> str:
    safe_off = f"/opt/launcher/bin/launcher-safe-off --config {CONFIG}"
    dry = pi.ok(f"{safe_off} --dry-run", "launcher-safe-off --dry-run", timeout=120)
    first, *pins = dry.splitlines()
    if "backend gpioset1" not in first:  # Bookworm's gpiod is libgpiod v1
        raise Failed(f"expected the libgpiod v1 gpioset: {first}")
    # For real: no GPIO chip under emulation, so every pin fails, each said in one line.
    real = pi.sh(safe_off, timeout=120)
    failed = [ln for ln in real.stderr.splitlines() if "could not drive low" in ln]
    if real.returncode != 1 or len(failed) != len(pins):
        raise Failed(f"exit {real.returncode}, {len(failed)} of {len(pins)} pins reported")
    return f"{len(pins)} outputs via gpioset v1; without a GPIO chip: exit 1, one line a pin"


def check_upgrade(pi: Pi) -> str:
    edited = pi.read(CONFIG) + "\n# edited by the box owner (pi-check)\n"
    pi.write(CONFIG, edited)
    out = pi.ok(INSTALL, "install.sh (again)", timeout=1200)
    if "keeping the existing" not in out or "upgrading the package" not in out:
        raise Failed("install.sh did not say it kept the config and upgraded in place")
    if pi.read(CONFIG) != edited:
        raise Failed(f"{CONFIG} was changed")
    installed = pi.ok(
        f"{VENV}/bin/python -c 'import firmware.run as m; print(m.__file__)'", "import", timeout=60
    ).strip()
    if pi.read(installed) != (TREE / "firmware/run.py").read_text():
        raise Failed(f"{installed} is not the tree's firmware/run.py")
    return "upgraded in place, the edited config kept"


def check_repair(pi: Pi) -> str:
    # What a first run leaves when ensurepip is missing (python3-venv not installed): a venv
    # without pip, which the system's pip (python3-pip, --system-site-packages) hides.
    pi.ok(
        f"rm -rf {VENV} && python3 -m venv --without-pip --system-site-packages {VENV}",
        "breaking the venv",
        timeout=120,
    )
    out = pi.ok(f"{INSTALL} --with-web", "install.sh --with-web", timeout=1200)
    if "rebuilding" not in out:
        raise Failed("install.sh did not notice the venv without its own pip")
    pip = pi.ok(f"{VENV}/bin/python -m pip --version", "pip --version", timeout=60)
    if f" from {VENV}/" not in pip:
        raise Failed(f"the venv still has no pip of its own: {pip.strip()}")
    return "the venv without its own pip was rebuilt; " + pip.split(" from ")[0]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Web:
    """The page's HTTP API, as a phone uses it (a session cookie, the page's own Origin)."""

    def __init__(self, url: str) -> None:
        self.url = url.rstrip("/")
        self.cookie = ""

    def call(self, method: str, path: str, body: dict | None = None) -> tuple[int, dict]:
        headers = {"Origin": self.url, "Cookie": self.cookie}
        data = None
        if body is not None:
            data, headers["Content-Type"] = json.dumps(body).encode(), "application/json"
        request = urllib.request.Request(self.url + path, data, headers, method=method)
        try:
            with urllib.request.urlopen(request, timeout=30) as answer:
                status, text, cookie = answer.status, answer.read(), answer.headers["Set-Cookie"]
        except urllib.error.HTTPError as exc:
            status, text, cookie = exc.code, exc.read(), None
        if cookie:
            self.cookie = cookie.split(";", 1)[0]
        return status, json.loads(text or b"{}")

    def act(self, line: str) -> dict:
        status, answer = self.call("POST", "/api/act", {"line": line})
        if status != 200 or not answer.get("ok"):
            raise Failed(f"POST /api/act {line!r}: {status} {answer}")
        return answer


def check_all_in_one(pi: Pi) -> str:
    """The daemon and `unoattack serve` as their units start them, over the daemon's pty
    link; one move made through the web API reaches the mock box and comes back."""
    wants = pi.root / UNIT_DIR.lstrip("/") / "multi-user.target.wants"
    for name in ("launcher.service", "unoattack-serve.service"):
        if not (wants / name).is_symlink():
            raise Failed(f"{name} is not enabled")
    pi.ok(
        "systemd-analyze verify --man=no launcher.service unoattack-serve.service",
        "systemd-analyze verify (with the drop-ins)",
        timeout=180,
    )
    serve_unit = Unit(pi, "unoattack-serve.service")
    env = serve_unit.environment(pi)
    link = env["UNOATTACK_PORT"]
    # Port 8500 may be taken on the machine running the check: the page moves, nothing else.
    env["UNOATTACK_HTTP"] = f"127.0.0.1:{free_port()}"
    notify = Notify()
    try:
        daemon, ready = start_daemon(pi, notify)
        target = os.readlink(pi.root / link.lstrip("/"))
        slave = os.stat(pi.root / target.lstrip("/"))
        launcher_gid = pi.ids("launcher").gid
        if slave.st_mode & 0o777 != 0o660 or slave.st_gid != launcher_gid:
            raise Failed(
                f"{link} -> {target} is mode {slave.st_mode & 0o777:o}, gid {slave.st_gid}"
            )
        # DynamicUser=yes: a user of its own, in the unit's SupplementaryGroups.
        pi.ok("id pi-check-serve || useradd --system --no-create-home pi-check-serve", "useradd")
        groups = tuple(" ".join(serve_unit.values("SupplementaryGroups")).split())
        serve = start_service(
            pi, serve_unit, pi.ids("pi-check-serve", groups), {**env, "HOME": "/"}
        )
        url = serve.wait_line(r"the table at (http://\S+)", READY_TIMEOUT_S).group(1)
        web = Web(url)
        status, joined = web.call("POST", "/api/join", {"code": env["UNOATTACK_CODE"]})
        if status != 200:
            raise Failed(f"POST /api/join with the code in serve.env: {status} {joined}")
        web.act("R5")  # the card turned up
        web.act("hit")  # the player must hit: the button goes live for them
        web.act("press")  # the press goes over the pty to the daemon; the fire comes back
        deadline = time.monotonic() + 60
        while True:
            _status, state = web.call("GET", "/api/state")
            bursts = (state.get("box") or {}).get("bursts") or []
            if bursts and sum(state["view"]["presses"]) == 1:
                break
            if time.monotonic() > deadline:
                raise Failed(f"the press never came back from the box: {state.get('box')}")
            time.sleep(0.5)
        burst = bursts[-1]
        if serve.terminate() != 0:
            raise Failed(f"serve did not stop cleanly: {serve.tail()}")
        stopped = stop_daemon(daemon, notify)
        if os.path.lexists(pi.root / link.lstrip("/")):
            raise Failed(f"{link} is still there after the daemon stopped")
    finally:
        notify.close()
    return (
        f"READY in {ready:.1f} s, {link} -> {target} (0660, group launcher); serve as a user "
        f"in {','.join(groups)}: join, R5, hit, press -> the box fired {burst['ejected']} "
        f"({burst['reason']}) for {burst['seat']}; both stopped: {stopped}"
    )


def check_suites(pi: Pi) -> str:
    venv = pi.mount_dev_venv()
    if not (venv / ".pi-check-ready").exists():
        reqs = "\n".join(dev_requirements())
        pi.write("/tmp/dev-requirements.txt", reqs + "\n")
        pi.ok(
            f"python3 -m venv {DEV_VENV} && {DEV_VENV}/bin/python -m pip install -q "
            "-r /tmp/dev-requirements.txt",
            "installing the [dev] extra",
            timeout=1800,
        )
        (venv / ".pi-check-ready").write_text("\n")
    # A developer's checkout as `make` sets it up (the editable install compiles the catalogs),
    # apart from the owner's, which install.sh builds at the same time. Installed again, as
    # `make` does, when what the install depends on changed (or the venv is new).
    copied, removed = pi.mount_dev_checkout()
    stamp, key = venv / ".pi-check-editable", build_inputs_key()
    installed = not stamp.exists() or stamp.read_text() != key
    if installed:
        pi.ok(
            f"cd {DEV_CHECKOUT} && {DEV_VENV}/bin/python -m pip install -q --no-deps -e .",
            "pip install -e .",
            timeout=900,
        )
        stamp.write_text(key)
    locale = pi.root / DEV_CHECKOUT.lstrip("/") / "i18n/locale"
    catalogs = list(locale.glob("*/LC_MESSAGES/*.po"))
    missing = [po.parent.parent.name for po in catalogs if not po.with_suffix(".mo").exists()]
    if missing:
        raise Failed(f"pip install -e . compiled no catalog for {', '.join(missing)}")
    start = time.monotonic()
    # As `make test` runs them, but pytest-timeout's hang guard (120 s a test) scaled for CPU-
    # bound Python at a tenth of its speed: a hypothesis test drawing thousands of frames takes
    # minutes here, as it would on a Pi Zero 2 W. It guards against hangs, not slowness.
    # Not mypy (tests/wire/test_types.py): it reads the source, so its answer is the same on
    # every CPU, and it checks every package whole, engine/web too, whose web extra this venv
    # does not carry; `make test` and `make lint` run it natively.
    done = pi.sh(
        f"cd {DEV_CHECKOUT} && {DEV_VENV}/bin/python -m pytest -n 2 --dist worksteal -q "
        f"-p no:cacheprovider --timeout={SUITE_TIMEOUT_S} --durations=20 tests/firmware tests/wire "
        f"--deselect {MYPY_TEST}",
        what="pytest",
        timeout=3600,
    )
    log = pi.failed("pytest", done).log  # kept whether it passed or not: the slowest tests
    summary = _last(done.stdout)
    if done.returncode != 0:
        failed = [ln for ln in done.stdout.splitlines() if ln.startswith("FAILED")]
        raise Failed(f"pytest exited {done.returncode}: {summary}; {'; '.join(failed[:5])}", log)
    editable = "installed -e" if installed else "the -e install reused"
    return (
        f"{summary} (pytest ran {time.monotonic() - start:.0f} s; checkout: {copied} files "
        f"copied, {removed} removed, {editable}; output: {log})"
    )


def arm64_checks(pi: Pi, checks: Checks, suites: bool) -> None:
    """Everything, on the 64-bit Pi. The test suites (their own venv) run beside the owner's
    install and checks: those are single-threaded, and the machine has two cores."""

    def check(name: str, fn: Callable[[], str]) -> bool:
        return checks.run("arm64", name, fn)

    suite = threading.Thread(
        target=check, args=("firmware and wire suites under emulation", lambda: check_suites(pi))
    )
    if suites:
        suite.start()
    try:
        if check("install.sh, fresh, as the owner runs it", lambda: check_fresh_install(pi)):
            owner_checks(pi, check, checks)
    finally:
        if suite.is_alive():
            suite.join()


def owner_checks(pi: Pi, check: Callable[[str, Callable[[], str]], bool], checks: Checks) -> None:
    """What the owner and systemd do with the installed box, on the 64-bit Pi."""
    check("the unit, offline (systemd-analyze)", lambda: check_unit(pi))
    check("launcher config check", lambda: check_config(pi))
    check("every language", lambda: check_languages(pi))
    check("daemon to READY as the service user, SIGTERM", lambda: check_ready(pi))
    check("launcher bench --mock", lambda: check_bench(pi))
    if has_simchip(pi):  # gpiozero's lgpio backend, as on a Pi, over the simulated chip
        check("daemon to READY on lgpio (simulated chip)", lambda: check_ready(pi, simchip=True))
        check("launcher bench on lgpio (simulated chip)", lambda: check_bench(pi, simchip=True))
    else:
        checks.note("arm64", f"no {SIMCHIP} in this tree: the daemon runs on mock pins only")
    check("safe-off script", lambda: check_safe_off(pi))
    check("install.sh again: upgrade, config kept", lambda: check_upgrade(pi))
    if check("install.sh --with-web after a failed first run", lambda: check_repair(pi)):
        check("the all-in-one box: a move through the web API", lambda: check_all_in_one(pi))


def armhf_checks(pi: Pi, checks: Checks) -> None:
    """The 32-bit smoke run."""

    def check(name: str, fn: Callable[[], str]) -> bool:
        return checks.run("armhf", name, fn)

    if check("install.sh, fresh, as the owner runs it", lambda: check_fresh_install(pi)):
        check("launcher config check", lambda: check_config(pi))
        check("daemon to READY as the service user, SIGTERM", lambda: check_ready(pi))
        check("launcher bench --mock", lambda: check_bench(pi))


# --- main ---------------------------------------------------------------------------------------


def _last(text: str) -> str:
    lines = [ln.strip() for ln in (text or "").strip().splitlines() if ln.strip()]
    return lines[-1][:300] if lines else ""


def _terminate(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)  # so every `finally` unmounts


def one_at_a_time(path: Path = LOCK) -> IO[str]:
    """This machine's pi-check lock, held until the process ends: binfmt_misc and qemu's entries
    are the machine's, and a second run would unmount what the first still uses. Waits for a
    run already going (Ctrl-C still ends the wait)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lock = path.open("a+")
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        lock.seek(0)
        say(f"{PROG}: another pi-check runs on this machine (pid {lock.read().strip()}); waiting")
        fcntl.flock(lock, fcntl.LOCK_EX)
    lock.seek(0)
    lock.truncate()
    lock.write(f"{os.getpid()}\n")
    lock.flush()
    return lock


def load() -> str:
    return f"{os.getloadavg()[0]:.1f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.splitlines()[0])
    parser.add_argument(
        "--arch", action="append", choices=tuple(ARCHES), help="only these (default: both)"
    )
    parser.add_argument(
        "--skip-suites", action="store_true", help="not the emulated test suites (quicker)"
    )
    parser.add_argument(
        "--cache",
        type=Path,
        default=Path(os.environ.get("PI_CHECK_CACHE", CACHE)),
        help=f"images, wheels and venvs kept between runs ($PI_CHECK_CACHE, default {CACHE})",
    )
    args = parser.parse_args(argv)
    arches = args.arch or list(ARCHES)
    cache = args.cache.resolve()
    started = time.monotonic()
    checks = Checks()
    host = Mounts()  # binfmt_misc, if this run mounted it
    pis: list[Pi] = []

    def mirror() -> str | None:
        return os.environ.get("PI_CHECK_MIRROR") or apt_mirror()

    def run_arch(arch: str) -> None:
        base: list[Path] = []

        def get_image() -> str:
            path, what = image(cache, arch, mirror, checks.stopping)
            base.append(path)
            return what

        if not checks.run(arch, f"Debian 12 image under qemu-{ARCHES[arch]}", get_image):
            return
        mounts = Mounts()
        pi = Pi(cache, arch, base[0], mounts)
        pi.stopping = checks.stopping
        pis.append(pi)
        try:
            if checks.run(arch, "chroot on an overlay of the image", pi.start) and checks.run(
                arch, "the wheels pip installs (cached)", pi.wheelhouse
            ):
                if arch == "arm64":
                    arm64_checks(pi, checks, not args.skip_suites)
                else:
                    armhf_checks(pi, checks)
        finally:
            pi.stop()  # nothing may run in the chroot while it is unmounted
            stuck = mounts.unmount_all()
            if stuck:
                checks.note(arch, f"could not unmount {', '.join(stuck)} (detached lazily)")

    threads = [threading.Thread(target=run_arch, args=(a,), name=a) for a in arches]
    lock: IO[str] | None = None
    try:
        need_root()
        signal.signal(signal.SIGTERM, _terminate)
        signal.signal(signal.SIGHUP, _terminate)
        lock = one_at_a_time()
        say(f"{PROG}: cache {cache}; load average {load()}")
        install_host_tools(arches)
        enable_binfmt(arches, host)
        for thread in threads:
            thread.start()
        while any(t.is_alive() for t in threads):
            for thread in threads:
                thread.join(0.5)  # short waits: a signal is handled here at once
    except Fatal as exc:
        print(str(exc), file=sys.stderr)
        return exc.code
    except (KeyboardInterrupt, SystemExit) as exc:
        # Stopped (Ctrl-C, SIGTERM, SIGHUP): whatever runs in a chroot is killed, each worker
        # unmounts its own; nothing interrupts the clean-up.
        for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(signum, signal.SIG_IGN)
        checks.stopping.set()
        for pi in list(pis):
            pi.stop()
        for thread in threads:
            if thread.is_alive():
                thread.join()
        host.unmount_all()
        left = mounts_under(cache)
        code = exc.code if isinstance(exc, SystemExit) else 128 + signal.SIGINT
        print(
            f"{PROG}: stopped; "
            + (f"still mounted: {', '.join(left)}" if left else "nothing left mounted"),
            file=sys.stderr,
        )
        return int(code) if isinstance(code, int) else 1
    finally:
        host.unmount_all()
        if lock is not None:
            lock.close()
    minutes, seconds = divmod(time.monotonic() - started, 60)
    say(f"{PROG}: summary (took {int(minutes)}m {seconds:04.1f}s, load average now {load()})")
    for r in sorted(checks.results, key=lambda r: r.name.split(":")[0]):
        arch, name = r.name.split(": ", 1)
        state = "pass" if r.ok else "FAIL"
        say(f"  {state} {r.seconds:6.1f} s  load {r.load:>4}  {arch:5}  {name}")
    passed = sum(r.ok for r in checks.results)
    failed = len(checks.results) - passed
    say(f"{PROG}: {passed} passed, {failed} failed")
    return 1 if failed or not checks.results else 0


if __name__ == "__main__":
    sys.exit(main())
