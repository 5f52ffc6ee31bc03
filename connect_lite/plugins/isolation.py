"""Isolated import of plugin locations: each location gets its own private module namespace.

How the isolation works
-----------------------
A plugin location (one immediate subdirectory of a ``plugin.path`` entry) never goes on
``sys.path``. Instead it is given a private package name under the synthetic root package
``_connect_lite_plugins``, derived only from the location's absolute path::

    /opt/plugins/acme-1.0.0  ->  _connect_lite_plugins.acme_1_0_0_3f2a9c1b

so every process (the worker, a Spark Python worker, a test subprocess) that loads the same
location gets the same module names. A module ``acme.py`` of that location is imported as
``_connect_lite_plugins.acme_1_0_0_3f2a9c1b.acme``.

A meta-path finder (:class:`_LocationFinder`, first on ``sys.meta_path``) owns every name under
the root package. Its loader compiles plugin sources itself (no ``.pyc`` is read or written,
so a plugin file imported normally elsewhere never gets the rewritten code and the other way
round) after passing the source AST through :class:`_ImportRewriter`. The rewriter turns every
absolute import whose first component is a top-level module or package *of the same location*
into an import of the prefixed name:

    import acme_helpers              ->  import <prefix>.acme_helpers as acme_helpers
    import acme_pkg.sub              ->  import <prefix>.acme_pkg.sub as <tmp>
                                         import <prefix>.acme_pkg as acme_pkg; del <tmp>
    from acme_pkg.sub import thing   ->  from <prefix>.acme_pkg.sub import thing

Imports of anything else (the standard library, connect_lite, installed packages) are left
alone, and relative imports work unchanged because every isolated module has the right
``__package__``. So a plugin sees its siblings from its own location only, never another
location's copy, and never a same-named module on ``sys.path``; two versions of one plugin load
side by side, and nothing bare (such as ``acme_helpers``) ever enters ``sys.modules``.

Limits: dynamic imports by name (``importlib.import_module("acme_helpers")``,
``__import__``) are not rewritten; plugins must use import statements (or relative imports)
for their own modules.

A fresh process finds a location from a :class:`PluginRef` (``load_class`` registers the
location first). A process on another machine (a Spark executor) has no such directory: there
:func:`use_copy` says which directory holds a copy of the location (the one Spark unpacked a
shipped archive to), and the location's modules load from that copy under the same private
names, so classes and instances pickled by either side resolve on the other. Locations
registered in this process are also published in the environment variable
``CONNECT_LITE_PLUGIN_LOCATIONS``, which child processes started afterwards inherit, so that
they can resolve a pickled reference to an isolated module name on their own.
"""

from __future__ import annotations

import ast
import hashlib
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import re
import sys
import threading
import types
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

ROOT = "_connect_lite_plugins"
BUILTIN_LOCATION = "connect_lite.connectors"
"""The package of built-in connectors, named like a location: ``filestream.source.X``."""
ENV_LOCATIONS = "CONNECT_LITE_PLUGIN_LOCATIONS"
_TMP_NAME = "__connect_lite_import_tmp"

_lock = threading.RLock()
_locations: dict[str, str] = {}  # package name -> absolute location directory
_copies: dict[str, str] = {}  # package name -> directory of a copy that stands in for it


def location_package(path: str) -> str:
    """The private package name of a location: deterministic from its absolute path."""
    absolute = os.path.normpath(os.path.abspath(path))
    slug = re.sub(r"\W", "_", os.path.basename(absolute)).lower() or "location"
    if not slug[0].isalpha():
        slug = "l" + slug
    digest = hashlib.sha256(absolute.encode("utf-8")).hexdigest()[:8]
    return f"{ROOT}.{slug}_{digest}"


CLASS_NAME_ATTRIBUTE = "__connect_class_name__"
"""A class attribute naming the class as Kafka Connect users know it, e.g. the Java class name
``org.apache.kafka.connect.file.FileStreamSourceConnector`` of the plugin it stands in for."""


def public_class_name(cls: type) -> str:
    """A class's name as users see it: the name it declares (:data:`CLASS_NAME_ATTRIBUTE`, in
    its own body: a subclass does not inherit it), else its :func:`module_class_name`."""
    declared = vars(cls).get(CLASS_NAME_ATTRIBUTE)
    return declared if isinstance(declared, str) and declared else module_class_name(cls)


def module_class_name(cls: type) -> str:
    """A class's Python name: module path inside its location plus the class name.

    A class of an installed module is named by its full module path, except in
    :data:`BUILTIN_LOCATION`, whose classes are named as if it were a plugin location.
    """
    module = cls.__module__
    if module.startswith(ROOT + "."):
        module = module.split(".", 2)[2] if module.count(".") >= 2 else module
    elif module.startswith(BUILTIN_LOCATION + "."):
        module = module[len(BUILTIN_LOCATION) + 1 :]
    return f"{module}.{cls.__qualname__}"


def top_level_names(path: str) -> set[str]:
    """The names of the top-level modules and packages a location holds."""
    names: set[str] = set()
    for entry in os.listdir(path):
        full = os.path.join(path, entry)
        if entry.endswith(".py") and os.path.isfile(full):
            stem = entry[:-3]
            if stem.isidentifier() and stem != "__init__":
                names.add(stem)
        elif entry.isidentifier() and _is_package_dir(full):
            names.add(entry)
    return names


def _is_package_dir(path: str) -> bool:
    if not os.path.isdir(path) or os.path.basename(path) == "__pycache__":
        return False
    return os.path.isfile(os.path.join(path, "__init__.py")) or any(
        name.endswith(".py") for name in os.listdir(path)
    )


def register_location(path: str) -> str:
    """Make a location importable under its private package; returns the package name."""
    absolute = os.path.normpath(os.path.abspath(path))
    package = location_package(absolute)
    with _lock:
        if package in _copies:  # loaded from its copy, whether ``path`` exists here or not
            _install_finder()
            return package
    if not os.path.isdir(absolute):
        raise ImportError(f"Plugin location {absolute} is not a directory")
    with _lock:
        _install_finder()
        if _locations.get(package) != absolute:
            _locations[package] = absolute
            known = [p for p in os.environ.get(ENV_LOCATIONS, "").split(os.pathsep) if p]
            if absolute not in known:
                os.environ[ENV_LOCATIONS] = os.pathsep.join([*known, absolute])
    return package


def use_copy(location: str, directory: str) -> str:
    """Load the location named ``location`` (its path where the plugin was found, which names
    its private package) from ``directory``, a copy of it; returns the package name.

    For processes that cannot read the original (a Spark executor on another machine) or
    must not (the copy is what was shipped). Modules already imported from the location in
    this process stay as they are.
    """
    package = location_package(location)
    copy = os.path.normpath(os.path.abspath(directory))
    if not os.path.isdir(copy):
        raise ImportError(f"The copy {copy} of plugin location {location} is not a directory")
    with _lock:
        _install_finder()
        _copies[package] = copy
        _locations[package] = copy
    return package


def load_location(path: str) -> types.ModuleType:
    """Import every module of a location in isolation; returns the location's package.

    Raises whatever the plugin code raises on import.
    """
    package = register_location(path)
    root = _locations[package]
    for relative in sorted(_module_names(root)):
        importlib.import_module(f"{package}.{relative}")
    return importlib.import_module(package)


def location_modules(path: str) -> dict[str, types.ModuleType]:
    """The loaded modules of a location, by their dotted name inside it."""
    prefix = location_package(path) + "."
    return {
        name[len(prefix) :]: module
        for name, module in list(sys.modules.items())
        if name.startswith(prefix) and module is not None
    }


@dataclass(frozen=True)
class PluginRef:
    """A picklable address of a plugin class: where it lives and what it is called.

    ``location`` is the plugin location directory (None for built-ins on the worker's
    own path); ``module`` and ``qualname`` name the class inside it. ``load()`` works in
    any process that has connect_lite installed, such as a Spark Python worker, and
    always loads the same isolated copy.
    """

    location: str | None
    module: str
    qualname: str

    def load(self) -> type[Any]:
        return load_class(self)


def class_ref(cls: type) -> PluginRef:
    """The PluginRef of a loaded class: in its plugin location's private package, or an
    installed module's (a class defined inside a function has no address)."""
    module = cls.__module__
    location = None
    if module.startswith(ROOT + "."):
        package = ".".join(module.split(".", 2)[:2])
        location = _lookup_location(package)
        if location is None:
            raise ImportError(f"{module} is in no registered plugin location")
        module = module[len(package) + 1 :]
    if "<locals>" in cls.__qualname__:
        raise ImportError(f"{module}.{cls.__qualname__} is defined inside a function")
    return PluginRef(location, module, cls.__qualname__)


def load_class(ref: PluginRef) -> type[Any]:
    """Load the class a PluginRef names (built-in when ``ref.location`` is None)."""
    if ref.location is None:
        module = importlib.import_module(ref.module)
    else:
        package = register_location(ref.location)
        module = importlib.import_module(f"{package}.{ref.module}")
    obj: Any = module
    for part in ref.qualname.split("."):
        obj = getattr(obj, part)
    if not isinstance(obj, type):
        raise ImportError(f"{ref.module}.{ref.qualname} is not a class")
    return obj


def _module_names(root: str) -> list[str]:
    """Dotted names of every module in a location: top-level modules and all package modules."""
    names: list[str] = []
    for top in top_level_names(root):
        full = os.path.join(root, top)
        if os.path.isdir(full):
            names.extend(_package_modules(full, top))
        else:
            names.append(top)
    return names


def _package_modules(directory: str, dotted: str) -> list[str]:
    names = [dotted]
    for entry in sorted(os.listdir(directory)):
        full = os.path.join(directory, entry)
        if entry.endswith(".py") and entry not in ("__init__.py", "__main__.py"):
            if entry[:-3].isidentifier():
                names.append(f"{dotted}.{entry[:-3]}")
        elif entry.isidentifier() and _is_package_dir(full):
            names.extend(_package_modules(full, f"{dotted}.{entry}"))
    return names


def _lookup_location(package: str) -> str | None:
    """The directory of a location package, also from locations published by a parent process."""
    with _lock:
        if package in _locations:
            return _locations[package]
        for path in os.environ.get(ENV_LOCATIONS, "").split(os.pathsep):
            if path and location_package(path) == package and os.path.isdir(path):
                _locations[package] = os.path.normpath(os.path.abspath(path))
                return _locations[package]
    return None


class _ImportRewriter(ast.NodeTransformer):
    """Rewrites absolute imports of a location's own modules to their private names."""

    def __init__(self, package: str, local: set[str]) -> None:
        self.package = package
        self.local = local

    def _is_local(self, dotted: str) -> bool:
        return dotted.split(".", 1)[0] in self.local

    def visit_ImportFrom(self, node: ast.ImportFrom) -> ast.AST:
        if node.level == 0 and node.module and self._is_local(node.module):
            node.module = f"{self.package}.{node.module}"
        return node

    def visit_Import(self, node: ast.Import) -> Any:
        if not any(self._is_local(alias.name) for alias in node.names):
            return node
        statements: list[ast.stmt] = []
        for alias in node.names:
            statements.extend(self._rewrite_alias(alias))
        for statement in statements:
            ast.copy_location(statement, node)
        return statements

    def _rewrite_alias(self, alias: ast.alias) -> list[ast.stmt]:
        if not self._is_local(alias.name):
            return [ast.Import(names=[alias])]
        full = f"{self.package}.{alias.name}"
        if alias.asname or "." not in alias.name:
            return [ast.Import(names=[ast.alias(full, alias.asname or alias.name)])]
        top = alias.name.split(".", 1)[0]
        return [
            ast.Import(names=[ast.alias(full, _TMP_NAME)]),
            ast.Import(names=[ast.alias(f"{self.package}.{top}", top)]),
            ast.Delete(targets=[ast.Name(_TMP_NAME, ast.Del())]),
        ]


class _IsolatedLoader(importlib.machinery.SourceFileLoader):
    """Loads a plugin module from source, with its location's imports rewritten."""

    def __init__(self, fullname: str, path: str, package: str, root: str) -> None:
        super().__init__(fullname, path)
        self.location_package = package
        self.location_root = root

    def get_code(self, fullname: str) -> types.CodeType:
        path = self.get_filename(fullname)
        source = self.get_data(path)
        tree = ast.parse(source, filename=path)
        rewriter = _ImportRewriter(self.location_package, top_level_names(self.location_root))
        tree = ast.fix_missing_locations(rewriter.visit(tree))
        return compile(tree, path, "exec", dont_inherit=True)


class _NamespaceLoader(importlib.abc.Loader):
    """Creates an empty package: the root package and each location's package."""

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType | None:
        return None

    def exec_module(self, module: types.ModuleType) -> None:
        return None


class _LocationFinder(importlib.abc.MetaPathFinder):
    """Finds every module under the private root package."""

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None = None,
        target: types.ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname == ROOT:
            return _package_spec(fullname, [])
        if not fullname.startswith(ROOT + "."):
            return None
        parts = fullname.split(".")
        package = ".".join(parts[:2])
        root = _lookup_location(package)
        if root is None:
            return None
        if len(parts) == 2:
            return _package_spec(fullname, [root])
        return _module_spec(fullname, package, root, parts[2:])


def _package_spec(fullname: str, search: list[str]) -> importlib.machinery.ModuleSpec:
    spec = importlib.machinery.ModuleSpec(fullname, _NamespaceLoader(), is_package=True)
    spec.submodule_search_locations = search
    return spec


def _module_spec(
    fullname: str, package: str, root: str, parts: list[str]
) -> importlib.machinery.ModuleSpec | None:
    base = os.path.join(root, *parts)
    if os.path.isdir(base) and _is_package_dir(base):
        init = os.path.join(base, "__init__.py")
        if not os.path.isfile(init):
            return _package_spec(fullname, [base])
        loader = _IsolatedLoader(fullname, init, package, root)
        return importlib.util.spec_from_file_location(
            fullname, init, loader=loader, submodule_search_locations=[base]
        )
    if os.path.isfile(base + ".py"):
        loader = _IsolatedLoader(fullname, base + ".py", package, root)
        return importlib.util.spec_from_file_location(fullname, base + ".py", loader=loader)
    return None


_finder = _LocationFinder()


def _install_finder() -> None:
    if _finder not in sys.meta_path:
        sys.meta_path.insert(0, _finder)


_install_finder()

__all__ = [
    "BUILTIN_LOCATION",
    "CLASS_NAME_ATTRIBUTE",
    "ENV_LOCATIONS",
    "ROOT",
    "class_ref",
    "load_class",
    "load_location",
    "location_modules",
    "location_package",
    "module_class_name",
    "public_class_name",
    "register_location",
    "top_level_names",
    "use_copy",
]
