"""Every public name of the library is documented numpydoc-style (STYLE rule 13).

Public: a function or class defined in a certlib module whose dotted path has no part
starting with an underscore, and the functions, methods and properties a public class
defines itself.  Checked, without reading the prose:

* each has a docstring (a dataclass's generated ``Name(field, ...)`` is not one);
* a function or method with parameters besides ``self``/``cls`` has a numpydoc
  ``Parameters`` section;
* each name exported from ``certlib`` and ``certlib.audit`` has an ``Examples`` section
  with a doctest (pytest runs them with ``--doctest-modules``).
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

import certlib


def public_modules() -> list[str]:
    names = [certlib.__name__]
    for info in pkgutil.walk_packages(certlib.__path__, "certlib."):
        if info.name.endswith("__main__"):
            continue
        if any(part.startswith("_") for part in info.name.split(".")[1:]):
            continue
        names.append(info.name)
    return names


def public_items(module_name: str):
    """(qualified name, object) for the module's own public functions and classes, and
    each public class's own public functions, methods and properties."""
    mod = importlib.import_module(module_name)
    for name, obj in sorted(vars(mod).items()):
        if name.startswith("_") or getattr(obj, "__module__", None) != module_name:
            continue
        if inspect.isfunction(obj):
            yield f"{module_name}.{name}", obj
        elif inspect.isclass(obj):
            yield f"{module_name}.{name}", obj
            for attr, member in vars(obj).items():
                if attr.startswith("_"):
                    continue
                if isinstance(member, property):
                    yield f"{module_name}.{name}.{attr}", member.fget
                    continue
                func = getattr(member, "__func__", member)  # classmethod, staticmethod
                if inspect.isfunction(func):
                    yield f"{module_name}.{name}.{attr}", func


def _doc(obj) -> str:
    doc = obj.__doc__ or ""
    if inspect.isclass(obj) and doc.startswith(f"{obj.__name__}("):
        return ""  # the dataclass decorator's generated signature
    return inspect.cleandoc(doc)


def _parameters(func) -> list[str]:
    return [p for p in inspect.signature(func).parameters if p not in ("self", "cls")]


ITEMS = [item for m in public_modules() for item in public_items(m)]


def test_the_walk_finds_the_library():
    names = {name for name, _ in ITEMS}
    assert "certlib.core.pool.Pool" in names
    assert "certlib.labelling.replay.replay" in names
    assert "certlib.audit.core.audit" in names
    assert len(ITEMS) > 300


@pytest.mark.parametrize("name,obj", ITEMS, ids=[name for name, _ in ITEMS])
def test_public_name_has_a_numpydoc_docstring(name, obj):
    doc = _doc(obj)
    assert doc, f"{name} has no docstring"
    if inspect.isfunction(obj) and _parameters(obj):
        assert "Parameters\n----------" in doc, f"{name}: no numpydoc Parameters section"


def _exported():
    import certlib.audit

    for package in (certlib, certlib.audit):
        for name in package.__all__:
            obj = getattr(package, name)
            if inspect.isfunction(obj) or inspect.isclass(obj):
                yield f"{package.__name__}.{name}", obj


EXPORTED = list(_exported())


@pytest.mark.parametrize("name,obj", EXPORTED, ids=[name for name, _ in EXPORTED])
def test_exported_name_has_an_example_that_runs(name, obj):
    doc = _doc(obj)
    assert "Examples\n--------" in doc, f"{name}: no Examples section"
    assert ">>> " in doc.split("Examples\n--------", 1)[1], f"{name}: no doctest in Examples"
