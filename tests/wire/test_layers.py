"""The layering rule (wire/__init__.py, common/__init__.py): `common` (what the box and the host
share: pure modules) imports only the standard library and i18n; firmware never imports engine;
wire imports neither engine nor firmware nor a GPIO library; engine never imports firmware (what
it shares with the box is in common). Every import counts, also one inside a function."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HARDWARE = ("gpiozero", "transitions", "RPi", "lgpio")  # what the host must never need
# What wire/ may import besides the standard library: its own modules, pyserial, the shared pure
# modules and i18n, for the event text a person reads (wire/text.py).
WIRE_ALLOWED = ("wire", "serial", "common", "i18n")
# What common/ may import besides the standard library.
COMMON_ALLOWED = ("common", "i18n")


def _imports(path: Path) -> set[str]:
    """Every module `path` imports (absolute names; `from x import y` gives x and x.y)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def _modules(package: str) -> dict[str, Path]:
    found = {}
    for path in (ROOT / package).rglob("*.py"):
        dotted = path.relative_to(ROOT).with_suffix("").as_posix().replace("/", ".")
        found[dotted.removesuffix(".__init__")] = path
    return found


def _top(name: str) -> str:
    return name.split(".")[0]


def test_firmware_never_imports_engine():
    bad = {
        (module, name)
        for module, path in _modules("firmware").items()
        for name in _imports(path)
        if _top(name) == "engine"
    }
    assert not bad


def test_wire_imports_neither_engine_nor_firmware_nor_hardware():
    bad = {
        (module, name)
        for module, path in _modules("wire").items()
        for name in _imports(path)
        if _top(name) not in (*WIRE_ALLOWED, *sys.stdlib_module_names)
    }
    assert not bad


def test_common_is_pure():
    """The shared modules run on the Pi and on a laptop: no GPIO library, no serial port, no
    side's own code."""
    bad = {
        (module, name)
        for module, path in _modules("common").items()
        for name in _imports(path)
        if _top(name) not in (*COMMON_ALLOWED, *sys.stdlib_module_names)
    }
    assert not bad
    assert len(_modules("common")) > 4  # the check can fail


def test_i18n_at_run_time_imports_only_the_standard_library():
    # wire/ (and so the box's command line) uses i18n: it must not pull in Babel or anything
    # else. messages.py is the catalogs' upkeep tool (Babel, development only).
    bad = {
        (module, name)
        for module, path in _modules("i18n").items()
        if module != "i18n.messages"
        for name in _imports(path)
        if _top(name) not in ("i18n", *sys.stdlib_module_names)
    }
    assert not bad
    assert "babel" in {_top(n) for n in _imports(ROOT / "i18n" / "messages.py")}  # can fail


def test_engine_never_imports_firmware():
    """What the host shares with the box (the jam model, the config reader, the command-line
    helpers) is in common; the box itself is run as a program (engine/mockbox.py)."""
    bad = {
        (module, name)
        for module, path in _modules("engine").items()
        for name in _imports(path)
        if _top(name) in ("firmware", *HARDWARE)
    }
    assert not bad
