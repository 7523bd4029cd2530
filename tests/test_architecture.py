"""The wings and their one-way arrows (ARCHITECTURE.md), checked on the source itself."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parent.parent / "lmzip"
WINGS = ["cli", "bench", "explain", "coding", "models", "arith", "cm"]
# who may import whom: a part imports only parts of a higher rank (and itself); siblings never
RANK = {"__main__": -1, "cli": 0, "bench": 1, "explain": 1, "__init__": 1.5, "api": 2, "files": 2, "levels": 2,
        "coding": 3, "models": 4, "arith": 5, "cm": 5, "errors": 6}


def part_of(path: Path) -> str:
    rel = path.relative_to(PKG)
    return rel.parts[0] if len(rel.parts) > 1 else rel.stem


def sources() -> list[Path]:
    return sorted(PKG.rglob("*.py"))


def imported_parts(path: Path) -> set[str]:
    """Every part of lmzip this file imports, at the top or inside a function."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module] if node.module != "lmzip" else [f"lmzip.{a.name}" for a in node.names]
        else:
            continue
        for name in names:
            bits = name.split(".")
            if bits[0] == "lmzip":
                out.add(bits[1] if len(bits) > 1 and bits[1] in RANK else "__init__")
    return out


def test_no_relative_imports_so_the_arrows_can_be_read():
    rel = [str(p) for p in sources() for n in ast.walk(ast.parse(p.read_text()))
           if isinstance(n, ast.ImportFrom) and n.level > 0]
    assert not rel


@pytest.mark.parametrize("path", sources(), ids=lambda p: str(p.relative_to(PKG)))
def test_imports_run_one_way(path):
    here = part_of(path)
    assert here in RANK, f"{path}: a part ARCHITECTURE.md does not know"
    upward = [p for p in imported_parts(path) if p != here and RANK[p] <= RANK[here]]
    assert not upward, f"{path.relative_to(PKG)} ({here}) imports {upward}, against the arrows"


def test_only_the_command_line_imports_click_or_prints():
    offenders = []
    for p in sources():
        if part_of(p) in ("cli", "__main__"):
            continue
        for n in ast.walk(ast.parse(p.read_text())):
            if isinstance(n, (ast.Import, ast.ImportFrom)):
                mods = [a.name for a in n.names] if isinstance(n, ast.Import) else [n.module or ""]
                offenders += [f"{p.name} imports click" for m in mods if m.split(".")[0] == "click"]
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "print":
                offenders.append(f"{p.name}:{n.lineno} prints")
    assert not offenders


def test_the_layout_is_wings_with_a_thin_top():
    top = [p.name for p in PKG.glob("*.py")]
    assert len(top) <= 7, top
    lines = {p: len(p.read_text().splitlines()) for p in sources()}
    in_wings = sum(n for p, n in lines.items() if part_of(p) in WINGS)
    assert in_wings >= 0.8 * sum(lines.values())
    for wing in WINGS:
        init = PKG / wing / "__init__.py"
        assert ast.get_docstring(ast.parse(init.read_text())), f"{wing}/__init__.py says nothing"


@pytest.mark.parametrize("wing", [w for w in WINGS if w != "cli"])
def test_every_export_of_a_wing_resolves(wing):
    mod = importlib.import_module(f"lmzip.{wing}")
    for name in mod._EXPORTS:
        assert getattr(mod, name) is not None
    with pytest.raises(AttributeError):
        mod.no_such_name  # noqa: B018


def test_the_container_and_the_coder_load_without_torch():
    code = ("import sys, lmzip.coding.format, lmzip.coding.coder, lmzip.cli.views; "
            "print('torch' in sys.modules)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert r.stdout.strip() == "False"


def _modules_imported(path: Path) -> set[str]:
    """The lmzip modules this file imports, at the top or inside a function (``from lmzip.x import y``:
    the module lmzip.x.y where there is one, else lmzip.x)."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [f"{node.module}.{a.name}" for a in node.names]
        else:
            continue
        for name in names:
            while name.startswith("lmzip.") and name not in MODULES:
                name = name.rsplit(".", 1)[0]
            if name in MODULES:
                out.add(name)
    return out


MODULES = {".".join(("lmzip", *p.relative_to(PKG).with_suffix("").parts)).removesuffix(".__init__"): p
           for p in sources()}


def test_no_import_circles():
    """No two modules reach each other through imports (a package's __init__ re-exporting its
    modules aside)."""
    graph = {m: {n for n in _modules_imported(p) if n != m and not m.startswith(n + ".")} for m, p in MODULES.items()}
    reach: dict[str, set[str]] = {}

    def reachable(m: str) -> set[str]:
        if m not in reach:
            reach[m], todo = set(), list(graph[m])
            while todo:
                n = todo.pop()
                if n not in reach[m]:
                    reach[m].add(n)
                    todo.extend(graph[n])
        return reach[m]

    circles = {frozenset({a, b}) for a in graph for b in graph[a] if a in reachable(b)}
    assert not circles, sorted(sorted(c) for c in circles)


REPO = PKG.parent
LOADERS = {"spec_from_file_location", "SourceFileLoader", "run_path", "import_module"}  # code loaded by path or name


def _reaches(path: Path, folder: str) -> list[str]:
    """Where a file imports from ``folder`` (the package or one of its modules by name), puts it on sys.path or
    loads code from it (importlib, runpy); running it as a command is not reaching into it."""
    text, modules = path.read_text(), {folder, *(p.stem for p in (REPO / folder).glob("*.py"))}
    out = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        elif isinstance(node, ast.Call):
            f, names = node.func, []
            on_path = isinstance(f, ast.Attribute) and f.attr in ("insert", "append", "extend") \
                and ast.unparse(f.value) == "sys.path"
            loads = (f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")) in LOADERS
            if (on_path or loads) and folder in ast.get_source_segment(text, node):
                out.append(f"{path.relative_to(REPO)}:{node.lineno} loads code from {folder}/")
        else:
            continue
        out += [f"{path.relative_to(REPO)}:{node.lineno} imports {n}" for n in names if n.split(".")[0] in modules]
    return out


def test_benchmarks_and_tests_do_not_import_each_other():
    """Shared code lives in lmzip (or benchmarks/common.py); a test runs a benchmark script only as a command."""
    offenders = [x for p in sorted((REPO / "tests").rglob("*.py")) for x in _reaches(p, "benchmarks")]
    offenders += [x for p in sorted((REPO / "benchmarks").rglob("*.py")) for x in _reaches(p, "tests")]
    assert not offenders, offenders
