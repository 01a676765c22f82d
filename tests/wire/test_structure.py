"""The house's shape, checked (issue 22): small classes, no import cycle, one narrator for the
words of a move, one command line per table module, entry points that take the game's options.

Beside the layering rule (test_layers.py): what keeps each concept in one place. Every import
counts, also one inside a function; only an import under `if TYPE_CHECKING:` (never run) does
not.
"""

from __future__ import annotations

import ast
import inspect
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("common", "engine", "firmware", "wire", "i18n")
MAX_CLASS = 700  # lines, anywhere
MAX_ENGINE_CLASS = 400  # lines, in engine/, but for the rules core
RULES_CORE = {("engine/game.py", "Round")}  # python-chess's `Board` shape: one big class
# The modules that decide or apply moves: they word nothing but their refusals (a
# RuleError's reason); what a move did is the narrator's to say (engine/narrate.py).
DECIDING = (
    "engine/game.py",
    "engine/blind.py",
    "engine/bots.py",
    "engine/follow.py",
    "engine/table/referee.py",
    "engine/table/moves.py",
    "engine/table/session.py",
    "engine/table/boxsync.py",
)
TRANSLATORS = {"_", "ngettext"}


@cache
def sources() -> dict[str, Path]:
    """Every module of the house by its dotted name."""
    found = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            dotted = path.relative_to(ROOT).with_suffix("").as_posix().replace("/", ".")
            found[dotted.removesuffix(".__init__")] = path
    return found


@cache
def tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), str(path))


def _type_checking(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def _run_time(node: ast.AST) -> Iterator[ast.AST]:
    """Every node under `node` but those under `if TYPE_CHECKING:`."""
    for child in ast.iter_child_nodes(node):
        if _type_checking(child):
            continue
        yield child
        yield from _run_time(child)


def imports(module: str) -> set[str]:
    """The house's modules `module` imports at run time (at the top or in a function)."""
    found: set[str] = set()
    known = sources()
    for node in _run_time(tree(known[module])):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
        for name in names:
            while name and name not in known:
                name = name.rpartition(".")[0]
            if name and name != module:
                found.add(name)
    return found


def cycles() -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan)."""
    graph = {m: imports(m) for m in sources()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_module_imports_another_that_imports_it_back() -> None:
    assert cycles() == []


def test_a_cycle_is_seen_even_through_an_import_inside_a_function(tmp_path: Path) -> None:
    a = ast.parse("def f():\n    from engine.b import x\n")
    b = ast.parse("from engine.a import y\n")
    found = [n for m in (a, b) for n in _run_time(m) if isinstance(n, ast.ImportFrom)]
    assert [n.module for n in found] == ["engine.b", "engine.a"]  # the check can fail
    hidden = ast.parse("if TYPE_CHECKING:\n    from engine.b import x\n")
    assert not [n for n in _run_time(hidden) if isinstance(n, ast.ImportFrom)]


def classes() -> Iterator[tuple[str, str, int]]:
    for path in sources().values():
        for node in ast.walk(tree(path)):
            if isinstance(node, ast.ClassDef):
                assert node.end_lineno is not None
                where = path.relative_to(ROOT).as_posix()
                yield where, node.name, node.end_lineno - node.lineno + 1


def test_classes_are_small() -> None:
    big = {
        (where, name, lines)
        for where, name, lines in classes()
        if (lines > MAX_CLASS or (where.startswith("engine/") and lines > MAX_ENGINE_CLASS))
        and (where, name) not in RULES_CORE
    }
    assert big == set()
    assert any(lines > MAX_ENGINE_CLASS for *_, lines in classes())  # the check can fail


def _refusal(parents: list[ast.AST]) -> bool:
    """Whether a message made under `parents` is a refusal's reason: in a `raise`, in an
    error made to be raised, or in a function that words one (`*_reason`)."""
    for node in parents:
        if isinstance(node, ast.Raise):
            return True
        if isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
            if name.endswith(("Error", "NoMatch")):
                return True
        if isinstance(node, ast.FunctionDef) and node.name.endswith("_reason"):
            return True
    return False


def words_made(path: Path) -> list[tuple[int, str]]:
    """Where a module makes text that is not a refusal: a translated message, or an f-string
    (the rules core's old log lines were)."""
    made: list[tuple[int, str]] = []

    def walk(node: ast.AST, parents: list[ast.AST]) -> None:
        for child in ast.iter_child_nodes(node):
            if _type_checking(child):
                continue
            here = [*parents, child]
            translated = (
                isinstance(child, ast.Call)
                and isinstance(child.func, ast.Name)
                and child.func.id in TRANSLATORS
            )
            if (translated or isinstance(child, ast.JoinedStr)) and not _refusal(here):
                made.append((child.lineno, ast.unparse(child)[:60]))
                continue
            walk(child, here)

    walk(tree(path), [])
    return made


def test_only_the_narrator_words_a_move() -> None:
    made = {where: words_made(ROOT / where) for where in DECIDING}
    assert {where: lines for where, lines in made.items() if lines} == {}
    # the check can fail: the narrator words moves, the rules core's refusals are words too
    assert words_made(ROOT / "engine" / "narrate.py")
    assert _refusal([ast.parse("raise RuleError(_('x'))").body[0]])


def test_only_the_tables_command_line_imports_argparse() -> None:
    table = ROOT / "engine" / "table"
    users = {
        path.name
        for path in table.glob("*.py")
        if any(
            isinstance(node, ast.Import | ast.ImportFrom) and "argparse" in ast.unparse(node)
            for node in _run_time(tree(path))
        )
    }
    assert users == {"cli.py"}


def test_library_entry_points_take_the_games_options() -> None:
    from engine.table.options import GameOptions
    from engine.table.session import build_session
    from engine.web.table_service import open_table

    for entry in (build_session, open_table):
        first = next(iter(inspect.signature(entry, eval_str=True).parameters.values()))
        assert first.annotation is GameOptions, entry.__name__


def _architecture_section(title: str) -> str:
    """One `## title` section of docs/architecture.md (up to the next `## `)."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    start = text.index(f"## {title}\n")
    end = text.find("\n## ", start + 3)
    return text[start : end if end >= 0 else None]


def test_the_architecture_pages_tables_are_true_to_the_tree() -> None:
    # "Where does X live": every file or folder it sends a reader to exists.
    where = _architecture_section("Where does X live")
    named = set(re.findall(r"`((?:common|engine|firmware|wire|i18n|tests)/[\w/.]*)`", where))
    assert named and {p for p in named if not (ROOT / p.split()[0]).exists()} == set()
    # The module table names every module of the house (a package's __init__ when it holds
    # code, not only its docstring), and no module that is gone.
    table = _architecture_section("Packages and ownership")
    rows = set(re.findall(r"^\| `([\w/]+\.py)`", table, re.M))
    modules = {
        path.relative_to(ROOT).as_posix()
        for path in sources().values()
        if path.name != "__init__.py" or _holds_code(tree(path))
    }
    assert modules - rows == set()
    assert {row for row in rows if not (ROOT / row).exists()} == set()


def _holds_code(module: ast.Module) -> bool:
    """Whether a module is more than its docstring and `from __future__` imports."""
    return any(
        not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant))
        and not (isinstance(node, ast.ImportFrom) and node.module == "__future__")
        for node in module.body
    )
