"""The import graph of the ``certlib`` package is acyclic (STYLE rule 9: dependencies
point one way).

The graph is read from the source with `ast`, without importing anything.  Nodes are
the modules under certlib/ (a package is its ``__init__``).  Every ``import`` and
``from ... import`` statement counts, wherever it is (inside functions too: a lazy
import hides a cycle, it does not remove it).  Edges:

* ``import certlib.a.b`` and ``from certlib.a import b`` (absolute or relative) lead to
  module ``certlib.a.b`` when it is a module, else to ``certlib.a`` (a name defined in
  that module or package ``__init__``).
* Importing a module also runs the ``__init__`` of each package on its path, so there is
  an edge to each of those packages too, except the importer's own packages (and
  itself, for a package ``__init__``): Python has already started those before the
  importer runs, so they add no new dependency.  This is why a package ``__init__``
  importing its own submodules (``from . import x``, ``from .x import y``) is an edge
  to ``x`` and not a cycle by itself, and why submodules importing one another inside
  their package do not all point back to the ``__init__``.
* An explicit import of a name from one's own package (``from . import name`` where
  ``name`` is not a submodule, ``from certlib import Pool`` inside certlib) is an edge
  to that package's ``__init__``.  It is kept: if the ``__init__`` imports the
  importer, the name may not exist yet when the importer runs, which is a real cycle.
  No certlib module does this today, so no exemption is needed.

``certlib/__init__`` imports its public names on first use (``import_module``), which
is not a static edge.  The rules are checked on small packages written to a temporary
directory.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def module_names(root: Path, package: str) -> dict[str, Path]:
    """Dotted module name -> file, for every module of ``package`` under ``root``."""
    out = {}
    for f in sorted((root / package).rglob("*.py")):
        parts = f.relative_to(root).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = f
    return out


def _packages_run(target: str, importer: str, is_package: bool) -> set:
    """Packages whose ``__init__`` importing ``target`` runs and ``importer`` has not
    already started (its own parents, and itself when it is a package)."""
    started = importer.split(".")
    started = {".".join(started[:i]) for i in range(1, len(started) + (1 if is_package else 0))}
    parts = target.split(".")
    return {".".join(parts[:i]) for i in range(1, len(parts))} - started


def import_graph(root: Path, package: str) -> dict[str, set]:
    """Module -> the modules of ``package`` it imports (module docstring)."""
    mods = module_names(root, package)
    graph: dict[str, set] = {m: set() for m in mods}
    for importer, path in mods.items():
        is_package = path.name == "__init__.py"
        here = importer if is_package else importer.rpartition(".")[0]
        targets = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    name = alias.name
                    while name and name not in mods:  # "" when outside the package
                        name = name.rpartition(".")[0]
                    if name:
                        targets.add(name)
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = here.split(".")
                    base = base[:len(base) - (node.level - 1)]
                    base = ".".join(base + ([node.module] if node.module else []))
                else:
                    base = node.module or ""
                if base not in mods:
                    continue  # outside the package
                for alias in node.names:
                    sub = f"{base}.{alias.name}"
                    targets.add(sub if sub in mods else base)
        for t in targets:
            graph[importer] |= {t} | _packages_run(t, importer, is_package)
        graph[importer].discard(importer)  # a package __init__ naming itself
    return graph


def find_cycle(graph: dict[str, set]) -> list | None:
    """One cycle as a list of modules ending where it starts, or None."""
    state: dict[str, int] = {}  # 1 = on the current path, 2 = done
    stack: list[str] = []

    def visit(m):
        state[m] = 1
        stack.append(m)
        for t in sorted(graph.get(m, ())):
            if state.get(t) == 1:
                return stack[stack.index(t):] + [t]
            if t not in state:
                found = visit(t)
                if found:
                    return found
        stack.pop()
        state[m] = 2
        return None

    for m in sorted(graph):
        if m not in state:
            found = visit(m)
            if found:
                return found
    return None


def without(graph: dict[str, set], drop) -> dict[str, set]:
    return {m: {t for t in ts if not drop(t)} for m, ts in graph.items() if not drop(m)}


def test_certlib_imports_are_acyclic():
    graph = import_graph(ROOT, "certlib")
    # the graph is read correctly: a few edges that exist
    assert "certlib.policies" in graph["certlib.labelling.replay"]
    assert "certlib.policies.coverage" in graph["certlib.policies"]
    assert "certlib.cli_output" in graph["certlib.audit.cli"]
    assert "certlib.audit.cli" in graph["certlib.cli"]
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def write(root: Path, files: dict) -> None:
    for name, text in files.items():
        f = root / name
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(text)


def test_rules_on_a_small_package(tmp_path):
    """The edge rules of the module docstring, one by one."""
    write(tmp_path, {
        "pkg/__init__.py": "from . import a\nfrom .sub import thing\n",
        "pkg/a.py": "from .b import f\nimport os\n",
        "pkg/b.py": "def f():\n    import pkg.sub.deep\n",
        "pkg/sub/__init__.py": "from .deep import thing\n",
        "pkg/sub/deep.py": "from .. import a\nthing = 1\n",
    })
    g = import_graph(tmp_path, "pkg")
    assert g["pkg"] == {"pkg.a", "pkg.sub"}  # its own submodules: edges, not cycles
    assert g["pkg.a"] == {"pkg.b"}  # os is outside; pkg already started
    assert g["pkg.b"] == {"pkg.sub", "pkg.sub.deep"}  # inside a function; runs pkg.sub
    assert g["pkg.sub"] == {"pkg.sub.deep"}
    assert g["pkg.sub.deep"] == {"pkg.a"}
    assert find_cycle(g) == ["pkg.a", "pkg.b", "pkg.sub", "pkg.sub.deep", "pkg.a"]


def test_name_from_own_package_is_an_edge_to_its_init(tmp_path):
    write(tmp_path, {
        "pkg/__init__.py": "from .a import f\nVALUE = 1\n",
        "pkg/a.py": "def f():\n    from pkg import VALUE\n    return VALUE\n",
    })
    g = import_graph(tmp_path, "pkg")
    assert g == {"pkg": {"pkg.a"}, "pkg.a": {"pkg"}}
    assert find_cycle(g) == ["pkg", "pkg.a", "pkg"]
    assert find_cycle(without(g, lambda m: m == "pkg.a")) is None
