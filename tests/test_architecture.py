"""The layout's promises (docs/architecture.md): no import cycle between Podium's
modules, and no source file over 700 lines."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
MAX_LINES = 700


def _modules() -> dict[str, Path]:
    mods = {}
    for path in SRC.rglob("*.py"):
        parts = path.relative_to(SRC).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        mods[".".join(parts)] = path
    return mods


def _imports(name: str, path: Path, mods: dict[str, Path]) -> set[str]:
    """The Podium modules that ``name`` imports when it is imported: module-level
    statements outside ``if TYPE_CHECKING:``; ``from pkg import sub`` counts as
    importing ``pkg.sub`` when that is a module (else ``pkg``); a package importing its
    own submodules (the usual ``__init__`` re-export) is not a cycle and is left out."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.parse(path.read_text()).body:
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                targets.append(sub if sub in mods else base)
        for t in targets:
            if t in mods and t != name and not (path.name == "__init__.py"
                                                 and t.startswith(name + ".")):
                out.add(t)
    return out


def test_no_import_cycle() -> None:
    mods = _modules()
    graph = {m: _imports(m, p, mods) for m, p in mods.items()}
    state: dict[str, int] = {}
    cycles: list[list[str]] = []

    def visit(u: str, stack: list[str]) -> None:
        state[u] = 1
        stack.append(u)
        for v in sorted(graph[u]):
            if state.get(v) == 1:
                cycles.append([*stack[stack.index(v):], v])
            elif v not in state:
                visit(v, stack)
        stack.pop()
        state[u] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m, [])
    assert not cycles, "import cycles:\n" + "\n".join(" -> ".join(c) for c in cycles)


def test_the_checker_finds_a_cycle(tmp_path: Path) -> None:
    """The cycle test can fail: two modules importing each other are found."""
    a = tmp_path / "a.py"
    b = tmp_path / "b.py"
    a.write_text("import pkg.b\n")
    b.write_text("from pkg import a\n")
    mods = {"pkg.a": a, "pkg.b": b}
    assert _imports("pkg.a", a, mods) == {"pkg.b"}
    assert _imports("pkg.b", b, mods) == {"pkg.a"}


def test_no_source_file_over_700_lines() -> None:
    long = {str(p.relative_to(SRC)): n for p in SRC.rglob("*.py")
            if (n := len(p.read_text().splitlines())) > MAX_LINES}
    assert not long, f"source files over {MAX_LINES} lines: {long}"


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
