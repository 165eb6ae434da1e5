"""The layout's promises (docs/architecture.md), checked on the whole import graph.

Every import statement counts, wherever it is: at module level, inside a function (a
lazy import), under a condition or in a ``try``; only imports under
``if TYPE_CHECKING:`` are left out (they never run).  On that graph:

* no import cycle, lazy imports included;
* every import points down the layers (:data:`LAYERS`) or stays in its own;
* no module imports another module's underscore name, and a private module
  (``_x.py``) is imported only from inside its own package;
* no source file is over 700 lines;
* docs/architecture.md names every module.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
MAX_LINES = 700

#: The layers, lowest first: a module may import its own layer and the ones below.
#: A module is in the layer of the longest prefix that names it.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("podium._version", "podium.errors", "podium._files", "podium._lazy", "podium.core"),
    ("podium.systems", "podium.history"),
    ("podium.rater", "podium.history_rater", "podium.checkpoint", "podium._add",
     "podium.replay", "podium.predict", "podium.outcomes", "podium._outcome_kernels",
     "podium.matchmaking", "podium._jit", "podium.beliefs"),
    ("podium.io", "podium.cli_common"),  # cli_common: options the command modules share
    ("podium.store",),
    ("podium.evaluation", "podium.service", "podium.matchmaking.cli"),
    ("podium.cli", "podium.__main__", "podium", "podium.prebuild"),
)


def _modules(src: Path = SRC) -> dict[str, Path]:
    mods = {}
    for path in src.rglob("*.py"):
        parts = path.relative_to(src).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        mods[".".join(parts)] = path
    return mods


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _import_nodes(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    """Every import statement that can run: anywhere in the tree, except in the body of
    ``if TYPE_CHECKING:`` (its ``else`` runs and counts)."""
    out: list[ast.Import | ast.ImportFrom] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import | ast.ImportFrom):
            out.append(node)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return out


@dataclass(frozen=True)
class Edge:
    """``source`` imports ``target`` (a module), maybe by the name ``name`` of it."""

    source: str
    target: str
    name: str | None
    line: int


def _edges(name: str, path: Path, mods: dict[str, Path]) -> list[Edge]:
    """The Podium modules ``name`` imports when it runs.  ``from pkg import sub`` counts as
    importing ``pkg.sub`` when that is a module (else ``pkg``, by the name ``sub``); a
    package importing its own submodules (the usual ``__init__`` re-export) is left out."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: list[Edge] = []
    for node in _import_nodes(ast.parse(path.read_text())):
        found: list[tuple[str, str | None]] = []
        if isinstance(node, ast.Import):
            found = [(a.name, None) for a in node.names]
        else:
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                found.append((sub, None) if sub in mods else (base, alias.name))
        for target, what in found:
            if target in mods and target != name and not (
                    path.name == "__init__.py" and target.startswith(name + ".")):
                out.append(Edge(name, target, what, node.lineno))
    return out


def _graph(mods: dict[str, Path]) -> list[Edge]:
    return [e for m, p in mods.items() for e in _edges(m, p, mods)]


def _cycles(mods: dict[str, Path], edges: list[Edge]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for e in edges:
        graph[e.source].add(e.target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def strong(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            strong(v)
    return out


def _layer(module: str) -> int:
    best, rank = -1, -1
    for r, prefixes in enumerate(LAYERS):
        for p in prefixes:
            if (module == p or module.startswith(p + ".")) and len(p) > best:
                best, rank = len(p), r
    return rank


def _private(part: str) -> bool:
    return part.startswith("_") and not part.startswith("__")


def _violations(mods: dict[str, Path], edges: list[Edge]) -> dict[str, list[str]]:
    """Every broken promise of the graph, by kind."""
    out: dict[str, list[str]] = {"cycle": [], "layer": [], "private name": [],
                                 "private module": []}
    out["cycle"] = [" <-> ".join(c) for c in _cycles(mods, edges)]
    for e in edges:
        where = f"{e.source}:{e.line} imports {e.target}" + (f".{e.name}" if e.name else "")
        if _layer(e.source) < _layer(e.target):
            out["layer"].append(where)
        if e.name is not None and _private(e.name):
            out["private name"].append(where)
        target_parts = e.target.split(".")
        for k, part in enumerate(target_parts):
            owner = ".".join(target_parts[:k])  # the package a private module belongs to
            if _private(part) and not (e.source == owner or e.source.startswith(owner + ".")):
                out["private module"].append(where)
                break
    return out


def test_every_module_has_a_layer() -> None:
    unplaced = sorted(m for m in _modules() if _layer(m) < 0)
    assert not unplaced, f"modules in no layer (add them to LAYERS): {unplaced}"


def test_the_import_graph_keeps_its_promises() -> None:
    """No run-time import cycle, no import up the layers, no underscore name or private
    module taken from outside its home."""
    mods = _modules()
    bad = {k: v for k, v in _violations(mods, _graph(mods)).items() if v}
    assert not bad, "\n".join(f"{k}:\n  " + "\n  ".join(v) for k, v in bad.items())


def test_the_checker_finds_what_it_must(tmp_path: Path) -> None:
    """The graph test can fail: a cycle closed by a lazy import, an import up the layers
    inside a function, an underscore name and a foreign private module are all found;
    an import under ``if TYPE_CHECKING:`` is not."""
    root = tmp_path / "podium"
    (root / "core").mkdir(parents=True)
    (root / "io").mkdir()
    (root / "__init__.py").write_text("")
    (root / "core" / "__init__.py").write_text("")
    (root / "io" / "__init__.py").write_text("")
    (root / "core" / "a.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    import podium.io.c\n"
        "def f():\n    from podium.core import b\n    return b\n")
    (root / "core" / "b.py").write_text(
        "def g():\n    try:\n        from podium.core.a import f, _hidden\n"
        "    except ImportError:\n        pass\n"
        "def h():\n    import podium.io.c\n")
    (root / "io" / "c.py").write_text("from podium.core import _secret\n")
    (root / "core" / "_secret.py").write_text("X = 1\n")
    mods = _modules(tmp_path)
    edges = _graph(mods)
    v = _violations(mods, edges)
    assert v["cycle"] == ["podium.core.a <-> podium.core.b"]
    assert v["layer"] == ["podium.core.b:7 imports podium.io.c"]
    assert v["private name"] == ["podium.core.b:3 imports podium.core.a._hidden"]
    assert v["private module"] == ["podium.io.c:1 imports podium.core._secret"]
    assert not any(e.source == "podium.core.a" and e.target == "podium.io.c" for e in edges)


def test_no_source_file_over_700_lines() -> None:
    long = {str(p.relative_to(SRC)): n for p in SRC.rglob("*.py")
            if (n := len(p.read_text().splitlines())) > MAX_LINES}
    assert not long, f"source files over {MAX_LINES} lines: {long}"


def test_architecture_doc_names_every_module() -> None:
    """docs/architecture.md names every module by its path (``x/y.py``, a package's
    ``x/__init__.py``) or dotted name (``podium.x.y``), so that the map of owners stays
    complete."""
    doc = (ROOT / "docs" / "architecture.md").read_text()
    missing = []
    for module, path in sorted(_modules().items()):
        rel = path.relative_to(SRC / "podium")
        dotted = module.removeprefix("podium.") if module != "podium" else ""
        forms = {module, str(rel)}
        if rel.name == "__init__.py":
            forms.add(f"{rel.parent}/__init__.py")
        else:
            forms.add(str(rel.with_suffix("")))
        if dotted:
            forms.add(dotted)
        if not any(re.search(rf"(?<![\w.]){re.escape(f)}(?![\w])", doc) for f in forms):
            missing.append(module)
    assert not missing, "docs/architecture.md does not mention: " + ", ".join(missing)


LOCATOR_MODULE = "podium.core.kernel_cache"


def _cached_kernels_without_locator(source: str) -> int | None:
    """The line of the first ``cache=True`` compilation (``nb.njit(cache=True)`` and the
    like) of a module that does not import :data:`LOCATOR_MODULE` at module level
    before it; ``None`` when the module compiles nothing with the cache or imports it
    in time."""
    tree = ast.parse(source)
    cached = [node.lineno for node in ast.walk(tree) if isinstance(node, ast.Call)
              and any(k.arg == "cache" and isinstance(k.value, ast.Constant)
                      and k.value.value is True for k in node.keywords)]
    if not cached:
        return None
    first = min(cached)
    for node in tree.body:
        if node.lineno > first:
            break
        if isinstance(node, ast.Import) and any(a.name == LOCATOR_MODULE for a in node.names):
            return None
        if isinstance(node, ast.ImportFrom) and (
                node.module == LOCATOR_MODULE or (
                    node.module == LOCATOR_MODULE.rpartition(".")[0]
                    and any(a.name == "kernel_cache" for a in node.names))):
            return None
    return first


def test_cached_kernels_get_the_cache_locator() -> None:
    """Every module compiling Numba kernels with ``cache=True`` imports
    podium.core.kernel_cache before them, so that their cache is stamped with every
    source they inline (an edit of core/numerics recompiles them)."""
    missing = {str(p.relative_to(SRC)): line for p in sorted(SRC.rglob("*.py"))
               if (line := _cached_kernels_without_locator(p.read_text())) is not None}
    assert not missing, f"cache=True before importing {LOCATOR_MODULE}: {missing}"


def test_the_locator_checker_finds_a_module_without_it() -> None:
    """The locator test can fail: a kernel before the import, or none at all, is found."""
    kernel = "@nb.njit(cache=True)\ndef f(x):\n    return x\n"
    assert _cached_kernels_without_locator("import numba as nb\n" + kernel) == 2
    assert _cached_kernels_without_locator(
        "import numba as nb\n" + kernel + f"import {LOCATOR_MODULE}\n") == 2
    assert _cached_kernels_without_locator(
        f"import numba as nb\nimport {LOCATOR_MODULE}  # noqa: F401\n" + kernel) is None
    assert _cached_kernels_without_locator(
        "from podium.core import kernel_cache\n" + kernel) is None
    assert _cached_kernels_without_locator('"""cache=True in a docstring"""\n') is None
