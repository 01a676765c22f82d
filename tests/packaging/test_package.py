"""The package as its users install it, never as `make` leaves the checkout.

A copy of the checkout as a fresh clone has it (the files git tracks or would track: no .mo,
no build/, no .venv) is built once for the whole run (`python -m build --sdist --wheel`: the
sdist, and a wheel from the tree as `pip install .` and systemd/install.sh build it) and
installed the three ways people install it: that wheel; the sdist, from which pip builds a wheel
of its own as it does with an sdist from PyPI; and an editable install (`pip install -e .`, what
`make` does). Each goes into a fresh venv outside the checkout; from a folder outside it,
`launcher` and `unoattack` answer in each of the five languages, asked with `--lang` and with the
locale; the web page, the sound pack and the default config are installed beside the code; and
no build prints a setuptools warning.

Offline and isolated: the build runs in this venv (`--no-isolation`: `build` and setuptools are
dev dependencies), pip installs with `--no-deps --no-index`, and the fresh venv sees, of this
venv, only the runtime dependencies (gpiozero, transitions, pyserial and what they need) through
a .pth file naming a folder of links to them (and to setuptools, for the editable install's
build): not the checkout, not the development tools.
"""

from __future__ import annotations

import fcntl
import filecmp
import functools
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest
from packaging.requirements import Requirement

from i18n import LANGUAGES, messages

ROOT = Path(__file__).resolve().parents[2]
DIST = "unoattack-launcher"
LOCALES = {
    "en": "en_GB.UTF-8",
    "th": "th_TH.UTF-8",
    "zh_Hant": "zh_TW.UTF-8",
    "ro": "ro_RO.UTF-8",
    "cy": "cy_GB.UTF-8",
}
CATALOGS = [f"i18n/locale/{code}/LC_MESSAGES/unoattack" for code in LANGUAGES]
# Folders of data installed beside the code, as the checkout holds them.
DATA = ("engine/web/static", "firmware/sounds/default")
# What the installed package says about itself (run by the venv's python).
WHERE = """
import json, firmware, firmware.config, engine.web, i18n
print(json.dumps({"firmware": firmware.__file__, "engine.web": engine.web.__file__,
                  "i18n": i18n.__file__, "config": str(firmware.config.default_path())}))
"""
SEATS = ("box {name}, {seats} seat", "box {name}, {seats} seats")
CARDS = ("{n} card", "{n} cards")
SETUPTOOLS_WARNING = re.compile(r"\w*Warning\b|is absent from the `packages` configuration")


def attempt(*argv: str | Path, cwd: Path, env: dict[str, str] | None = None) -> tuple[int, str]:
    """A command's exit code and what it printed (stdout, then stderr)."""
    done = subprocess.run(
        [str(a) for a in argv], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )
    return done.returncode, done.stdout + done.stderr


def run(*argv: str | Path, cwd: Path, env: dict[str, str] | None = None) -> str:
    """What a command that must succeed printed."""
    code, printed = attempt(*argv, cwd=cwd, env=env)
    assert code == 0, f"{argv} exited {code}:\n{printed}"
    return printed


def fresh_checkout(dest: Path) -> Path:
    """The checkout's files as a fresh clone holds them (with changes not committed yet)."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.exists() or source.is_symlink():  # not deleted in the working tree
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / name, follow_symlinks=False)
    return dest


def runtime_dependencies() -> list[metadata.Distribution]:
    """This venv's distributions the package needs to run (no extras), and theirs; and
    setuptools, the build backend an editable install runs in the venv it installs into."""
    found: dict[str, metadata.Distribution] = {}
    wanted = [Requirement(r) for r in [*(metadata.requires(DIST) or []), "setuptools"]]
    while wanted:
        req = wanted.pop()
        key = re.sub(r"[-_.]+", "-", req.name).lower()
        if key in found or (req.marker is not None and not req.marker.evaluate({"extra": ""})):
            continue
        found[key] = dist = metadata.distribution(req.name)
        wanted += [Requirement(r) for r in dist.requires or []]
    return list(found.values())


@pytest.fixture(scope="module")
def dependencies(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder of links to the runtime dependencies' top-level files and .dist-info."""
    folder = tmp_path_factory.mktemp("runtime-dependencies")
    for dist in runtime_dependencies():
        for top in {file.parts[0] for file in dist.files or []}:
            if top not in ("..", "__pycache__") and not top.endswith(".pth"):
                (folder / top).symlink_to(Path(dist.locate_file(top)))
    return folder


def fresh_venv(path: Path, dependencies: Path) -> Path:
    """A venv (no pip of its own) that sees the runtime dependencies; returns its python."""
    run(sys.executable, "-m", "venv", "--without-pip", path, cwd=path.parent)
    python = path / "bin" / "python"
    site = run(python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))", cwd=path)
    Path(site.strip(), "runtime-dependencies.pth").write_text(f"{dependencies}\n")
    return python


def pip_install(python: Path, *args: str | Path, cwd: Path) -> str:
    """This venv's pip installing into `python`'s venv: offline, whatever pip.conf says."""
    env = {**os.environ, "PIP_CONFIG_FILE": os.devnull, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    pip = (sys.executable, "-m", "pip", "--python", python, "install", "--no-deps", "--no-index")
    return run(*pip, *args, cwd=cwd, env=env)


def build(checkout: Path, out: Path) -> None:
    """`python -m build --sdist --wheel` run in this venv, into `out`; it printed no warning."""
    what = ("--no-isolation", "--sdist", "--wheel", "-o", out, checkout)
    printed = run(sys.executable, "-m", "build", *what, cwd=checkout)
    assert not SETUPTOOLS_WARNING.findall(printed), printed


@dataclass(frozen=True)
class Dist:
    """What the checkout was built into, and the copy of it that was built."""

    sdist: Path
    wheel: Path
    checkout: Path


@pytest.fixture(scope="session")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Dist:
    """The checkout's sdist and wheel, built once for the run: the xdist workers share one
    build (the first to ask makes it, under a lock; another waits for it)."""
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent  # this run's folder, which every worker's own folder is in
    folder = base / "package-dist"
    with (base / "package-dist.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (folder / "built").exists():
            shutil.rmtree(folder, ignore_errors=True)  # a build that failed half-way
            build(fresh_checkout(folder / "clone"), folder / "dist")
            (folder / "built").touch()
    (sdist,) = (folder / "dist").glob("*.tar.gz")
    (wheel,) = (folder / "dist").glob("*.whl")
    return Dist(sdist, wheel, folder / "clone")


@functools.cache
def catalog(code: str) -> Any:
    """Language `code`'s .po as Babel reads it (what the checks expect; not our compiler)."""
    return messages.read(code)


def forms(code: str, msgid: str | tuple[str, str]) -> list[str]:
    """`msgid` in language `code` as its .po has it: one form, or each plural form; the English
    where a form is empty."""
    entry = catalog(code).get(msgid)
    english = list(msgid) if isinstance(msgid, tuple) else [msgid]
    strings = list(entry.string) if isinstance(msgid, tuple) else [entry.string]
    return [string or english[min(i, 1)] for i, string in enumerate(strings)]


def said(code: str, msgid: str) -> str:
    return forms(code, msgid)[0]


def user_env(python: Path, locale: str = "C.UTF-8") -> dict[str, str]:
    """A user's shell: the venv's commands first on PATH, the language from LANG only."""
    unset = ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG", "PYTHONPATH", "VIRTUAL_ENV")
    env = {k: v for k, v in os.environ.items() if k not in unset}
    return {**env, "PATH": f"{python.parent}{os.pathsep}{env['PATH']}", "LANG": locale}


def wrong_languages(python: Path, config: Path, home: Path) -> list[str]:
    """Every command of the installed package, in every language, that does not say what the
    catalogs say (its output, shortened). `launcher` and `unoattack` are the venv's."""
    box = tomllib.loads(config.read_text(encoding="utf-8"))["box"]
    wrong = []
    for code in LANGUAGES:
        plain, local = user_env(python), user_env(python, LOCALES[code])
        usage = said(code, "usage: ")
        commands = {
            "launcher config check": (["launcher", "--lang", code, "config", "check"], plain),
            "launcher --help": (["launcher", "--help"], local),
            "unoattack --help": (["unoattack", "--lang", code, "--help"], plain),
            "unoattack deck": (["unoattack", "deck"], local),
        }
        # Four at a time: each is a process of its own that mostly waits for its imports.
        with ThreadPoolExecutor(4) as pool:
            running = {
                command: pool.submit(attempt, *argv, cwd=home, env=env)
                for command, (argv, env) in commands.items()
            }
            ran = {command: future.result() for command, future in running.items()}
        out = {command: printed for command, (_exit, printed) in ran.items()}
        lines = {command: text.splitlines() or [""] for command, text in out.items()}
        n = re.search(r"\d+", lines["unoattack deck"][0])
        decks = [
            said(code, "{deck} deck: {cards}").format(deck="attack", cards=form.format(n=n[0]))
            for form in forms(code, CARDS)
            if n is not None
        ]
        seats = [
            "  " + f.format(name=repr(box["name"]), seats=box["seats"]) for f in forms(code, SEATS)
        ]
        right = {
            "launcher config check": lines["launcher config check"][:2]
            in ([said(code, "{path}: OK").format(path=config), s] for s in seats),
            "launcher --help": lines["launcher --help"][0].startswith(usage + "launcher "),
            "unoattack --help": lines["unoattack --help"][0].startswith(usage + "unoattack ")
            and said(code, "simulate many games between bots") in out["unoattack --help"],
            "unoattack deck": lines["unoattack deck"][0] in decks,
        }
        how = {
            "launcher --help": f"LANG={LOCALES[code]}",
            "unoattack deck": f"LANG={LOCALES[code]}",
        }
        wrong += [
            f"{command} ({how.get(command, f'--lang {code}')}): {out[command][:200]!r}"
            for command, ok in right.items()
            if not ok or ran[command][0] != 0
        ]
    return wrong


def check_installed(python: Path, checkout: Path, home: Path, code_in: Path) -> dict[str, Path]:
    """The package installed for `python` runs from `code_in`, carries the data of `checkout`
    and speaks every language (from `home`, a folder outside both); returns where it is."""
    found = json.loads(run(python, "-c", WHERE, cwd=home, env=user_env(python)))
    where = {name: Path(path) for name, path in found.items()}
    for name in ("firmware", "engine.web", "i18n"):
        assert where[name].is_relative_to(code_in), (name, where[name])
    installed = where["firmware"].parent.parent
    for folder in DATA:
        names = sorted(os.listdir(checkout / folder))
        assert sorted(os.listdir(installed / folder)) == names, folder
        _same, differ, missing = filecmp.cmpfiles(
            checkout / folder, installed / folder, names, shallow=False
        )
        assert differ == missing == [], (folder, differ, missing)
    assert filecmp.cmp(where["config"], checkout / "hardware" / "launcher.toml", shallow=False)
    for catalog in CATALOGS:
        assert (installed / f"{catalog}.mo").is_file(), catalog
    assert wrong_languages(python, where["config"], home) == []
    return where


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    return fresh_checkout(tmp_path / "clone")


def test_the_checks_tell_each_language_from_english():
    # Every line the checks read differs from the English in the other four languages, so a
    # package that falls back to English fails them.
    for code in LANGUAGES[1:]:
        for msgid in ("usage: ", "{deck} deck: {cards}", "simulate many games between bots"):
            assert said(code, msgid) != msgid, (code, msgid)
        assert set(forms(code, SEATS)).isdisjoint(SEATS), code


@pytest.mark.slow
def test_a_wheel_built_from_the_checkout(dist, dependencies, tmp_path):
    files = zipfile.ZipFile(dist.wheel).namelist()
    assert [c for c in CATALOGS if f"{c}.mo" not in files] == []
    assert [f for f in files if f.endswith(".po")] == []
    venv = tmp_path / "venv"
    pip_install(fresh_venv(venv, dependencies), dist.wheel, cwd=tmp_path)
    check_installed(venv / "bin" / "python", dist.checkout, tmp_path, code_in=venv)


@pytest.mark.slow
def test_a_wheel_built_from_the_sdist(dist, dependencies, tmp_path):
    sdist = dist.sdist
    top = sdist.name.removesuffix(".tar.gz")
    with tarfile.open(sdist) as tar:
        files = tar.getnames()
    # The catalogs travel as sources, compiled by the build; never as .mo.
    assert [c for c in CATALOGS if f"{top}/{c}.po" not in files] == []
    assert [f for f in files if f.endswith(".mo")] == []
    assert {f"{top}/setup.py", f"{top}/i18n/msgfmt.py"} <= set(files)
    venv = tmp_path / "venv"
    # pip builds a wheel from the sdist, as from PyPI (its build output is shown with -v). The
    # build backend runs in the fresh venv (setuptools is linked), from the unpacked sdist only.
    printed = pip_install(
        fresh_venv(venv, dependencies), "-v", "--no-build-isolation", sdist, cwd=tmp_path
    )
    assert "Building wheel for unoattack-launcher" in printed, printed
    assert not SETUPTOOLS_WARNING.findall(printed), printed
    check_installed(venv / "bin" / "python", dist.checkout, tmp_path, code_in=venv)


@pytest.mark.slow
def test_an_editable_install_compiles_the_catalogs_in_its_tree(checkout, dependencies, tmp_path):
    assert not list(checkout.glob("i18n/locale/*/LC_MESSAGES/*.mo"))
    venv = tmp_path / "venv"
    # Without build isolation the build backend runs in the fresh venv (setuptools is linked).
    pip_install(
        fresh_venv(venv, dependencies), "--no-build-isolation", "-e", checkout, cwd=tmp_path
    )
    check_installed(venv / "bin" / "python", checkout, tmp_path, code_in=checkout)
