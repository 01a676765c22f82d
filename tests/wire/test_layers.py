"""The layering rule (wire/__init__.py): firmware never imports engine; wire imports neither
engine nor a GPIO library; engine imports from firmware only pure modules (no GPIO library, no
state machine, no serial port behind them). Every import counts, also one inside a function."""

from __future__ import annotations

import ast
import sys
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HARDWARE = ("gpiozero", "transitions", "RPi", "lgpio")  # what the host must never need
# What wire/ may import besides the standard library: its own modules, pyserial, the pure
# firmware modules (checked below) and i18n, for the event text a person reads (wire/text.py).
WIRE_ALLOWED = ("wire", "serial", "firmware", "i18n")


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


FIRMWARE = _modules("firmware")


def _top(name: str) -> str:
    return name.split(".")[0]


@cache
def _pure(module: str) -> bool:
    """A firmware module whose imports (followed through firmware) reach no GPIO library."""
    seen, todo = {module}, [module]
    while todo:
        for name in _imports(FIRMWARE[todo.pop()]):
            if _top(name) in HARDWARE:
                return False
            if name in FIRMWARE and name not in seen:
                seen.add(name)
                todo.append(name)
    return True


def test_firmware_never_imports_engine():
    bad = {
        (module, name)
        for module, path in FIRMWARE.items()
        for name in _imports(path)
        if _top(name) == "engine"
    }
    assert not bad


def test_wire_imports_neither_engine_nor_hardware_and_only_pure_firmware():
    bad = set()
    for module, path in _modules("wire").items():
        for name in _imports(path):
            outside = _top(name) not in (*WIRE_ALLOWED, *sys.stdlib_module_names)
            if outside or _top(name) in HARDWARE or (name in FIRMWARE and not _pure(name)):
                bad.add((module, name))
    assert not bad


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


def test_engine_imports_from_firmware_only_pure_modules():
    bad = {
        (module, name)
        for module, path in _modules("engine").items()
        for name in _imports(path)
        if name in FIRMWARE and not _pure(name)
    }
    assert not bad
    assert not _pure("firmware.daemon") and _pure("firmware.jam")  # the check can fail
