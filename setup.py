"""The one build step pyproject.toml cannot state: the message catalogs compiled at build time.

Everything else about the package is in pyproject.toml. Here `build_py` also compiles every
`i18n/locale/<language>/LC_MESSAGES/*.po` into the `.mo` gettext reads, with `i18n/msgfmt.py`
(standard library only; the compiler `make` uses too), so a wheel, a wheel built from the sdist,
`pip install .` (systemd/install.sh) and `pip install -e .` all speak the five languages. The
.po files go into the sdist (they are `build_py`'s sources); the .mo files are never committed.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
CATALOGS = "locale/*/LC_MESSAGES/*.po"  # inside the i18n package


def _msgfmt() -> ModuleType:
    """i18n/msgfmt.py, loaded by its path: the project is not importable while it is built."""
    spec = importlib.util.spec_from_file_location("_unoattack_msgfmt", HERE / "i18n" / "msgfmt.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class BuildPyWithCatalogs(build_py):
    """`build_py`, plus each .po compiled into a .mo beside where the package's files go: the
    build directory, or for an editable install the source tree itself (which is what runs)."""

    def _catalogs(self) -> list[tuple[str, str, str]]:
        """(.mo in the build directory, .po, .mo this build writes) for every catalog."""
        source = Path(self.get_package_dir("i18n"))
        built = Path(self.build_lib, "i18n")
        found = []
        for po in sorted(source.glob(CATALOGS)):
            mo = po.relative_to(source).with_suffix(".mo")
            written = source / mo if self.editable_mode else built / mo
            found.append((str(built / mo), str(po), str(written)))
        return found

    def run(self) -> None:
        super().run()
        msgfmt = _msgfmt()
        for _built, po, written in self._catalogs():
            self.mkpath(str(Path(written).parent))
            self.make_file(
                [po], written, msgfmt.compile_po, (Path(po), Path(written)), f"compiling {po}"
            )

    def get_outputs(self, include_bytecode: bool = True) -> list[str]:
        if self.editable_mode:
            return list(self.get_output_mapping())
        return [*super().get_outputs(include_bytecode), *(b for b, _po, _w in self._catalogs())]

    def get_output_mapping(self) -> dict[str, str]:
        mapping = super().get_output_mapping()
        # Editable: the .mo in the build directory stands for the one written in the tree.
        mapping.update((b, w if self.editable_mode else po) for b, po, w in self._catalogs())
        return dict(sorted(mapping.items()))

    def get_source_files(self) -> list[str]:
        return [*super().get_source_files(), *(po for _b, po, _w in self._catalogs())]


setup(cmdclass={"build_py": BuildPyWithCatalogs})
