"""The layers point one way: every import of addressable/ and adapters/, at module
level, in a function or under `TYPE_CHECKING`, goes to the same layer or one below,
and no modules import each other in a cycle. The layers are listed here, once."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.helpers import ROOT

PACKAGES = ("addressable", "adapters")

# Lowest first: a module may import its own layer and those before it. A module's layer
# is the row of the longest folder that holds it.
LAYERS: tuple[tuple[str, str], ...] = (
    ("addressable.core", "ids and hashing, records, payloads, tokens, secrets, errors: pure"),
    ("addressable.store", "the Store protocol, the one store, disk / memory / redis"),
    ("addressable.recording", "wrap a call, record it, replay by id, ingest, bundles"),
    ("addressable.context", "message shapes, eviction, stubs, summarisers, compaction"),
    ("addressable.tools", "the model-facing registry: definitions, handle, replay_result"),
    ("addressable.state", "the state document, its checks, continuity, staleness"),
    ("addressable.kit", "Toolkit, the object users hold, made of the parts below"),
    ("addressable", "the front door: the package's names and its sub-namespaces"),
    ("adapters", "the tool families, installed as addressable.adapters"),
    ("addressable.integrations", "the SDK and framework recipes"),
    ("addressable.mcp", "MCP serve and proxy"),
    ("addressable.bench", "the token-savings engine, on the public API"),
    ("addressable.cli", "the one face that knows every part"),
    ("addressable.__main__", "python -m addressable"),
)
RANK = {folder: rank for rank, (folder, _) in enumerate(LAYERS)}


def layer_of(module: str) -> str:
    """The row of the longest folder in `LAYERS` that holds `module`."""
    holders = [f for f in RANK if module == f or module.startswith(f + ".")]
    return max(holders, key=len) if holders else ""


def _modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


MODULES = _modules()
INSTALLED_AS = "addressable.adapters"  # the name adapters/ is installed under


def _targets(module: str, path: Path, node: ast.Import | ast.ImportFrom) -> set[str]:
    """The project modules an import statement loads (the nearest known one)."""
    names: list[str] = []
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    else:
        if node.level:
            base = module.split(".")
            if path.name != "__init__.py":
                base.pop()  # a module's package, not the module
            base = base[: len(base) - (node.level - 1)]
            source = ".".join([*base, *([node.module] if node.module else [])])
        else:
            source = node.module or ""
        # `from pkg import sub` loads pkg.sub when it is a module, else a name of pkg.
        names = [f"{source}.{alias.name}" for alias in node.names] + [source]
    return _known(module, names)


def _known(module: str, names: list[str]) -> set[str]:
    """The nearest project module of each dotted name, other than `module` itself."""
    found: set[str] = set()
    for name in names:
        if name == INSTALLED_AS or name.startswith(INSTALLED_AS + "."):
            # adapters/ is installed as addressable.adapters: the same modules
            name = "adapters" + name.removeprefix(INSTALLED_AS)
        while name and name not in MODULES:
            name = name.rpartition(".")[0]
        if name and name != module:
            found.add(name)
    return found


def _loaded_by_name(node: ast.Call) -> str | None:
    """The module an `importlib.import_module("name")` call loads, when it is named."""
    called = node.func
    name = called.attr if isinstance(called, ast.Attribute) else getattr(called, "id", None)
    if name != "import_module" or not node.args:
        return None
    first = node.args[0]
    return first.value if isinstance(first, ast.Constant) and isinstance(first.value, str) else None


def _edges() -> dict[tuple[str, str], int]:
    """Every import between project modules, with the line of its first occurrence:
    import statements, and modules loaded by a name written in `import_module`."""
    edges: dict[tuple[str, str], int] = {}
    for module, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: set[str] = set()
            if isinstance(node, ast.Import | ast.ImportFrom):
                targets = _targets(module, path, node)
            elif isinstance(node, ast.Call) and (name := _loaded_by_name(node)) is not None:
                targets = _known(module, [name])
            for target in targets:
                edges.setdefault((module, target), node.lineno)
    return edges


def _cycles(edges: dict[tuple[str, str], int]) -> list[list[str]]:
    graph: dict[str, list[str]] = {m: [] for m in MODULES}
    for source, target in edges:
        graph[source].append(target)
    cycles: list[list[str]] = []
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(module: str) -> None:
        state[module] = 1
        path.append(module)
        for target in sorted(graph[module]):
            if state.get(target) == 1:
                cycles.append([*path[path.index(target) :], target])
            elif target not in state:
                visit(target)
        path.pop()
        state[module] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module)
    return cycles


def test_every_module_has_a_layer() -> None:
    unlisted = sorted(m for m in MODULES if not layer_of(m))
    assert not unlisted, f"modules in no folder of LAYERS: {unlisted}"
    empty = sorted(f for f in RANK if not any(layer_of(m) == f for m in MODULES))
    assert not empty, f"LAYERS lists folders that hold no module: {empty}"


def test_the_walk_sees_every_kind_of_import() -> None:
    # The walk itself: a TYPE_CHECKING import, a function's import and a relative one
    # in the modules known to have them are all found.
    edges = _edges()
    assert ("addressable.kit", "addressable.recording.recorder") in edges  # relative
    assert ("addressable.tools.replay", "addressable.store") in edges  # TYPE_CHECKING
    assert ("addressable.mcp.cli", "addressable.kit") in edges  # in a function
    assert ("adapters.api", "addressable") in edges  # absolute
    assert ("addressable.cli.inspect", "adapters") in edges  # import_module("...")
    # adapters/ under the name it is installed as is the adapters layer, not the facade
    statement = ast.parse("from addressable.adapters.shell import Shell").body[0]
    assert isinstance(statement, ast.ImportFrom)
    assert _targets(
        "addressable.context.stubs", MODULES["addressable.context.stubs"], statement
    ) == {"adapters.shell"}


def test_no_import_points_up() -> None:
    upward = [
        f"{source} ({layer_of(source)}) imports {target} ({layer_of(target)}), "
        f"{MODULES[source].relative_to(ROOT)}:{line}"
        for (source, target), line in sorted(_edges().items())
        if RANK[layer_of(target)] > RANK[layer_of(source)]
    ]
    assert not upward, "upward imports:\n" + "\n".join(upward)


def test_no_cycles() -> None:
    cycles = _cycles(_edges())
    assert not cycles, "import cycles:\n" + "\n".join(" -> ".join(c) for c in cycles)


def test_the_check_finds_an_upward_edge_and_a_cycle() -> None:
    # The checks themselves: an import from the core into the kit, and back, is both
    # an upward edge and a cycle; a module is in the row of its longest folder.
    assert layer_of("addressable.store.disk.sql") == "addressable.store"
    assert layer_of("addressable.ids") == "addressable"
    assert layer_of("adapters.shell") == "adapters"
    edges = {
        ("addressable.core.ids", "addressable.kit"): 1,
        ("addressable.kit", "addressable.core.ids"): 1,
    }
    assert RANK[layer_of("addressable.kit")] > RANK[layer_of("addressable.core.ids")]
    assert _cycles(edges) == [["addressable.core.ids", "addressable.kit", "addressable.core.ids"]]


def _meta_keys_written_out(tree: ast.AST) -> list[tuple[int, str]]:
    """A key of `Record.meta` named as a string: `….meta.get("key")` (or `pop`,
    `setdefault`), `….meta["key"]`, `"key" in ….meta`."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        owner: ast.expr | None = None
        key: ast.expr | None = None
        if isinstance(node, ast.Subscript):
            owner, key = node.value, node.slice
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("get", "pop", "setdefault")
            and node.args
        ):
            owner, key = node.func.value, node.args[0]
        elif isinstance(node, ast.Compare) and isinstance(node.ops[0], ast.In | ast.NotIn):
            owner, key = node.comparators[0], node.left
        if (
            isinstance(owner, ast.Attribute)
            and owner.attr == "meta"
            and isinstance(key, ast.Constant)
            and isinstance(key.value, str)
        ):
            found.append((node.lineno, key.value))
    return found


def test_below_the_adapters_meta_is_read_through_the_report_keys() -> None:
    # What an adapter wrote in a record's meta reaches the layers below only by the
    # keys `Report` declares; a key spelt out there is one tool family's word.
    written = [
        f"{MODULES[module].relative_to(ROOT)}:{line} reads meta[{key!r}]"
        for module, path in MODULES.items()
        if RANK[layer_of(module)] < RANK["adapters"]
        for line, key in _meta_keys_written_out(ast.parse(path.read_text(encoding="utf-8")))
    ]
    assert not written, "\n".join(written)
    forms = 'a.meta.get("k1")\nb.meta["k2"]\n"k3" in c.meta\nd.meta.pop("k4")\n"k" in x'
    seen = _meta_keys_written_out(ast.parse(forms))
    assert seen == [(1, "k1"), (2, "k2"), (3, "k3"), (4, "k4")]
