"""The public API is one sorted __all__, and it stays in step with what is exported."""

from __future__ import annotations

import ast
import builtins
import importlib
import pkgutil
import re
import subprocess
import sys
from pathlib import Path

import addressable as ad
import addressable.adapters as adapters

ROOT = Path(ad.__file__).parent.parent
SOURCES = sorted([*(ROOT / "addressable").rglob("*.py"), *(ROOT / "adapters").rglob("*.py")])


def test_all_lists_every_public_name_once_and_sorted() -> None:
    public = {name for name in dir(ad) if not name.startswith("_")}
    # the package's folders and modules are namespaces, not names of its front door
    modules = {info.name for info in pkgutil.iter_modules(ad.__path__)} | {"adapters"}
    assert set(ad.__all__) == public - modules
    # sorted as ruff's RUF022 sorts it: constants first, then the rest alphabetically
    assert ad.__all__ == sorted(ad.__all__, key=lambda name: (not name.isupper(), name))
    assert len(ad.__all__) == len(set(ad.__all__))


def test_every_exported_error_derives_from_the_root() -> None:
    errors = [getattr(ad, n) for n in ad.__all__ if isinstance(getattr(ad, n), type)]
    errors = [e for e in errors if issubclass(e, Exception) and not issubclass(e, Warning)]
    assert len(errors) >= 10
    assert all(issubclass(e, ad.AddressableError) for e in errors)


def test_adapters_install_under_addressable_and_not_at_top_level(tmp_path: object) -> None:
    # From a directory outside the checkout, `adapters` must not resolve to this project.
    code = (
        "import importlib.util, addressable.adapters as a; "
        "print(a.__name__); print(importlib.util.find_spec('adapters'))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=str(tmp_path), capture_output=True, text=True, check=True
    ).stdout.split("\n")
    assert out[0] == "addressable.adapters"
    assert out[1] == "None"


def _tree() -> set[type[ad.AddressableError]]:
    for info in pkgutil.walk_packages(ad.__path__, "addressable."):
        # The mcp extra may be missing; __main__ runs the command line.
        if not info.name.startswith(("addressable.mcp", "addressable.__main__")):
            importlib.import_module(info.name)
    found: set[type[ad.AddressableError]] = set()
    todo = [ad.AddressableError]
    while todo:
        cls = todo.pop()
        found.add(cls)
        todo += cls.__subclasses__()
    return found


def test_every_error_in_the_tree_is_exported() -> None:
    public = [c for c in _tree() if not c.__name__.startswith("_")]
    assert {"Stale", "MalformedMessages", "MemoryCommandError", "ResponseTooLarge"} <= {
        c.__name__ for c in public
    }
    unexported = [
        c
        for c in public
        if getattr(ad, c.__name__, None) is not c and getattr(adapters, c.__name__, None) is not c
    ]
    assert unexported == []


def test_every_error_the_adapters_export_is_in_the_tree() -> None:
    exported = [getattr(adapters, n) for n in adapters.__all__]
    errors = [
        e
        for e in exported
        if isinstance(e, type) and issubclass(e, Exception) and not issubclass(e, Warning)
    ]
    assert {e.__name__ for e in errors} >= {"MemoryCommandError", "ResponseTooLarge"}
    assert all(issubclass(e, ad.AddressableError) for e in errors)
    assert issubclass(adapters.MemoryCommandError, ad.ArgumentError)


def test_the_tree_drawn_in_errors_is_the_classes_tree() -> None:
    """Each error drawn in addressable/_errors.py's docstring derives from the one it is
    drawn under, and from the builtin it says it also is."""
    from addressable.core import errors as _errors

    drawn: list[tuple[int, str, str | None]] = []  # depth, name, builtin it also is
    for line in (_errors.__doc__ or "").splitlines():
        found = re.match(r"^\s*((?:[│ ]   )*)[├└]── (?:adapters\.)?(\w+)(?: \(also (\w+)\))?", line)
        if found:
            drawn.append((len(found[1]) // 4 + 1, found[2], found[3]))
    assert len(drawn) >= 20
    parents = ["AddressableError"]
    for depth, name, also in drawn:
        del parents[depth:]
        cls = getattr(ad, name, None) or getattr(adapters, name)
        assert getattr(ad, parents[-1]) in cls.__bases__, (name, parents[-1])
        if also is not None:
            assert issubclass(cls, getattr(builtins, also)), (name, also)
        parents.append(name)
    assert issubclass(ad.BadId, ad.NotFound) and issubclass(ad.BadId, ValueError)
    # and every public error of the tree is drawn
    public = {c.__name__ for c in _tree() if not c.__name__.startswith("_")}
    assert public - {"AddressableError"} - {name for _, name, _ in drawn} == set()


# Exceptions outside the tree that may be raised, and why.
OUTSIDE_THE_TREE = {
    "SystemExit": "the command line's exit",
    "NotImplementedError": "what a subclass must define",
    "AssertionError": "code that cannot be reached",
    "ArgumentTypeError": "argparse's own, which argparse turns into a usage error",
    "MCPError": "the MCP protocol's error, sent to the client",
    "TooManyRedirects": "httpx's own, raised as httpx would: a fetch that failed",
    "ToolError": "the Anthropic tool runner's own: it sends the text as a result with is_error",
    "ToolException": "LangChain's own: the tool's text becomes a ToolMessage with status error",
    "AttributeError": "a module's __getattr__ for a name it does not have, as Python's own",
    "KeyboardInterrupt": "Ctrl-C, as Python's own handler raises it (the benchmark's)",
}
# Calls that make the exception raised: a function whose return annotation names it is
# checked by that; these name what they make otherwise.
FACTORIES = {
    "adapters/_clients.py:error": "the httpcore timeout its caller names, as httpcore raises",
    "adapters/api.py:sent.error": "what sending failed with (httpx's own, a deadline, "
    "ResponseTooLarge): recorded, then raised to the caller as a failed tool's exception is",
}


def _name(node: ast.expr) -> str:
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


def _caught_here(name: str, handlers: list[ast.ExceptHandler]) -> bool:
    # A raise inside a try whose handler catches it (by name, or a builtin base): it
    # never leaves.
    raised = getattr(builtins, name, None)
    for handler in handlers:
        kinds = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
        for kind in kinds:
            caught = Exception if kind is None else getattr(builtins, _name(kind), None)
            if kind is not None and _name(kind) == name:
                return True
            if isinstance(raised, type) and isinstance(caught, type) and issubclass(raised, caught):
                return True
    return False


def _raises(tree: ast.Module) -> list[tuple[ast.Raise, list[ast.AST]]]:
    found: list[tuple[ast.Raise, list[ast.AST]]] = []

    def walk(node: ast.AST, above: list[ast.AST]) -> None:
        if isinstance(node, ast.Raise):
            found.append((node, above))
        for child in ast.iter_child_nodes(node):
            walk(child, [*above, node])

    walk(tree, [])
    return found


def _allowed(
    raise_: ast.Raise,
    above: list[ast.AST],
    tree_names: set[str],
    returns: dict[str, str],
    where: str,
) -> bool:
    exc = raise_.exc
    if exc is None or (isinstance(exc, ast.Name) and not exc.id.lstrip("_")[:1].isupper()):
        return True  # a re-raise, of what was caught
    name = _name(exc)
    if not name.lstrip("_")[:1].isupper():  # a function that makes the exception
        made = returns.get(name)
        made_by = ast.unparse(exc.func if isinstance(exc, ast.Call) else exc)
        return made in tree_names or made in OUTSIDE_THE_TREE or f"{where}:{made_by}" in FACTORIES
    if name in tree_names or name in OUTSIDE_THE_TREE:
        return True
    for outer, inner in zip(above, [*above[1:], raise_], strict=True):
        if (
            isinstance(outer, ast.Try)
            and inner in outer.body
            and _caught_here(name, outer.handlers)
        ):
            return True
        if isinstance(outer, ast.FunctionDef) and any(
            _name(d).endswith("validator") for d in outer.decorator_list
        ):
            return True  # pydantic turns it into a ValidationError
    return False


def test_nothing_raised_is_outside_the_tree() -> None:
    tree_names = {c.__name__ for c in _tree()}
    modules = {path: ast.parse(path.read_text(encoding="utf-8")) for path in SOURCES}
    returns: dict[str, str] = {}
    for module in modules.values():
        for node in ast.walk(module):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.returns:
                returns[node.name] = _name(node.returns) or ast.unparse(node.returns)
    outside = [
        f"{path.relative_to(ROOT)}:{raise_.lineno}: {ast.unparse(raise_)}"
        for path, module in modules.items()
        for raise_, above in _raises(module)
        if not _allowed(raise_, above, tree_names, returns, path.relative_to(ROOT).as_posix())
    ]
    assert outside == []
    assert len(tree_names) >= 20


def test_each_factory_named_raises_there() -> None:
    # An entry is one place, not a name allowed everywhere: `raise sent.error` elsewhere
    # is checked as any raise is.
    for entry in FACTORIES:
        where, made_by = entry.split(":")
        assert f"raise {made_by}" in (ROOT / where).read_text(encoding="utf-8"), entry


NAMESPACES = ("compaction", "errors", "ids", "kit", "messages", "state", "store", "tokens")


def test_the_front_door_is_small_and_the_rest_is_in_namespaces() -> None:
    errors = [
        n
        for n in ad.__all__
        if isinstance(getattr(ad, n), type) and issubclass(getattr(ad, n), Exception)
    ]
    assert len(set(ad.__all__) - set(errors)) <= 35
    # every name of every namespace is found in one of them, and what it names is the same
    for name in NAMESPACES:
        space = importlib.import_module(f"addressable.{name}")
        assert space.__all__ == sorted(space.__all__, key=lambda n: (not n.isupper(), n)), name
        assert len(space.__all__) == len(set(space.__all__)), name
        for exported in space.__all__:
            assert hasattr(space, exported), f"addressable.{name}.{exported}"
    assert ad.messages.parse is ad.parse_messages  # an earlier name, found through the door
    assert "parse_messages" not in dir(ad)


def test_importing_the_package_loads_no_part_of_it() -> None:
    code = (
        "import sys, addressable; "
        "print(sorted(m for m in sys.modules if m.startswith('addressable.')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
