"""The interpreter's rooms and the one way its imports run (docs/internals/layout.md).

The core is every module at the top of `interpreter/`; every subpackage is a room whose
`__init__` says what kind it is (`ROOM = "plug-in"`, `"store"` or `"tool"`, or `"core"` for
core modules kept together in a folder, `patterns/`) and which of its modules are the
boundaries the core talks to (`BOUNDARY`). The core imports only the core and boundaries; a plug-in or a store imports the core, boundaries and its own room; a tool
imports anything. No room but a tool loads a heavy stack, except that a store may load its
own database driver (`STORE_DRIVERS`). The rules are read from the source (every import, at
any depth in a module), not from a list of today's files, so a new module is checked the day
it is added.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

import pytest

from conftest import ROOT

PACKAGE = ROOT / "interpreter"
KINDS = ("core", "plug-in", "store", "tool")
HEAVY = ("compiler", "lark", "networkx", "hypothesis", "litestar", "uvicorn", "starlette",
         "fastapi", "redis", "prometheus_client")
STORE_DRIVERS = ("redis",)  # the heavy stacks a store room may import: its drivers, no other


class Room(NamedTuple):
    kind: str
    boundary: tuple[str, ...]


def _constant(tree: ast.Module, name: str) -> object:
    for node in tree.body:
        if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == [name]:
            return ast.literal_eval(node.value)
    return None


def rooms() -> dict[str, Room]:
    """Room name -> its kind and boundary modules, from its `__init__`."""
    found = {}
    for init in sorted(PACKAGE.glob("*/__init__.py")):
        tree = ast.parse(init.read_text(encoding="utf-8"))
        kind, boundary = _constant(tree, "ROOM"), _constant(tree, "BOUNDARY")
        assert kind in KINDS, f"{init}: say ROOM = one of {KINDS}"
        assert isinstance(boundary, tuple), f"{init}: say BOUNDARY = (modules the core uses)"
        assert ast.get_docstring(tree), f"{init}: say in a docstring what the room is for"
        for module in boundary:
            assert (init.parent / f"{module}.py").exists(), f"{init}: no module {module}"
        found[init.parent.name] = Room(kind, boundary)
    return found


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(path: Path) -> set[str]:
    """Every module `path` imports, absolute, relative imports resolved."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = module_name(path) if path.name == "__init__.py" else module_name(path).rpartition(".")[0]
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)  # `from . import x`
    return names


def place(module: str, known: dict[str, Room]) -> str | None:
    """`core`, `boundary`, a room's name, or None for a module outside the interpreter."""
    parts = module.split(".")
    if parts[0] != "interpreter" or len(parts) == 1:
        return None
    if parts[1] in known:
        if known[parts[1]].kind == "core":  # core modules kept together in a folder
            return "core"
        if len(parts) > 2 and parts[2] in known[parts[1]].boundary:
            return "boundary"
        return parts[1]
    return "core" if (PACKAGE / f"{parts[1]}.py").exists() else None


def room_of(path: Path, known: dict[str, Room]) -> str:
    """The room a source file is in, or `core` (the package's own `__init__` included)."""
    parts = path.relative_to(PACKAGE).parts
    return parts[0] if len(parts) > 1 and parts[0] in known else "core"


def sources() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)


def test_every_room_says_what_it_is():
    assert rooms(), "the interpreter has rooms"


@pytest.mark.parametrize("path", sources(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_run_one_way(path):
    known = rooms()
    here = room_of(path, known)
    kind = "core" if here == "core" else known[here].kind
    if kind == "tool":
        return
    for module in imported(path):
        there = place(module, known)
        if there in (None, "core", "boundary", here):
            continue
        pytest.fail(f"{module_name(path)} ({kind}) imports {module} ({known[there].kind} room "
                    f"{there}): the core imports only the core and boundaries, a plug-in or a "
                    "store only those and its own room")


def test_the_core_and_the_plug_ins_never_import_the_compiler_or_the_heavy_stacks():
    known = rooms()
    for path in sources():
        here = room_of(path, known)
        kind = "core" if here == "core" else known[here].kind
        if kind == "tool":
            continue
        allowed = STORE_DRIVERS if kind == "store" else ()
        heavy = {m for m in imported(path) if m.split(".")[0] in HEAVY
                 and m.split(".")[0] not in allowed}
        assert not heavy, f"{path.relative_to(ROOT)} imports {sorted(heavy)}"


def test_importing_the_engine_loads_nothing_heavy():
    code = ("import sys, interpreter.engine, interpreter.loader\n"
            f"print(sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r}))")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_the_top_level_is_small_and_no_file_is_long():
    top = [p.name for p in PACKAGE.glob("*.py") if p.name != "__init__.py"]  # the core
    assert len(top) <= 12, sorted(top)
    for path in sources() + sorted((ROOT / "compiler").glob("*.py")):
        lines = path.read_text(encoding="utf-8").count("\n")
        assert lines <= 600, f"{path.relative_to(ROOT)} has {lines} lines"


def test_the_service_imports_the_compiler_only_inside_its_design_time_handlers():
    """SPEC 11: `/session/json` and `/session/validate` compile in the server; nothing else
    in the service may load the compiler, so a server that never gets one never imports it."""
    for path in sorted((PACKAGE / "service").glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        top = {n.module or "" for n in tree.body if isinstance(n, ast.ImportFrom)} | \
            {a.name for n in tree.body if isinstance(n, ast.Import) for a in n.names}
        assert not {m for m in top if m.split(".")[0] == "compiler"}, path.name
        inside = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
                  and (n.module or "").split(".")[0] == "compiler"}
        # compiling.py: the compile child process (SPEC 11.1), started by design.py
        assert not inside or path.name in ("design.py", "compiling.py"), \
            f"{path.name} imports {inside}"


def test_mgi_run_loads_neither_the_web_stack_nor_redis():
    code = ("import sys\nfrom interpreter.cli.main import build_parser\nbuild_parser()\n"
            "import interpreter.engine, interpreter.cli.plugins\n"
            f"print(sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r}))")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
