"""A function wrapped by `kit.tool`: its signature, its arguments as JSON, its schema.

The schema and the checks of the arguments come from pydantic: each named parameter is
a field of a model built from the function's annotations, defaults and the parts of its
Google-style docstring (its text, and each parameter's description from `Args:`).

Before 3.12, pydantic takes only `typing_extensions.TypedDict`, and a parameter typed
with `typing.TypedDict` would be left untyped: no schema for the model, no check of what
it sends. Such a class is remade, once, as the same `typing_extensions.TypedDict`: the
same keys, the same required ones, nested ones and those inside other types too.
"""

from __future__ import annotations

import functools
import inspect
import re
import sys
import types
import typing
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import typing_extensions
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, create_model
from pydantic.fields import FieldInfo
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue, JsonSchemaWarningKind

from ..core.errors import ArgumentError
from ..core.ids import JSON_SCALARS, canonical_args
from ..core.records import Determinism
from .argerrors import argument_error, not_taken, one_line, problem

_SECTION = re.compile(
    r"^(\s*)(Args|Arguments|Parameters|Params|Keyword Args|Keyword Arguments):\s*$"
)
_ENTRY = re.compile(r"^\**(\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")


def split_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """A Google-style docstring's text without its `Args:` section, and the parameters'
    descriptions from that section (continuation lines joined with newlines)."""
    lines = doc.splitlines()
    kept: list[str] = []
    described: dict[str, list[str]] = {}
    i = 0
    while i < len(lines):
        header = _SECTION.match(lines[i])
        i += 1
        if header is None:
            kept.append(lines[i - 1])
            continue
        indent = len(header.group(1))
        current: str | None = None
        entry_indent: int | None = None
        while i < len(lines):
            line = lines[i]
            stripped = line.strip()
            depth = len(line) - len(line.lstrip())
            if stripped and depth <= indent:
                break
            i += 1
            if not stripped:
                continue
            if entry_indent is None:
                entry_indent = depth
            entry = _ENTRY.match(stripped) if depth == entry_indent else None
            if entry is not None:
                current = entry.group(1)
                described[current] = [entry.group(2).strip()]
            elif current is not None:
                described[current].append(stripped)
    text = re.sub(r"\n{3,}", "\n\n", "\n".join(kept)).strip()
    return text, {k: "\n".join(part for part in v if part) for k, v in described.items()}


_MADE: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()  # class -> remade


def readable(hint: Any) -> Any:
    """`hint`, with every `typing.TypedDict` in it remade for pydantic where it needs
    that (before Python 3.12); `hint` itself when there is none."""
    if sys.version_info >= (3, 12):
        return hint
    return _remade(hint, 0)


_DEEPEST = 20  # nesting of types looked into


def _remade(hint: Any, depth: int) -> Any:
    if depth > _DEEPEST:
        return hint
    if typing.is_typeddict(hint) and type(hint).__module__ == "typing":
        return _typed_dict(hint, depth)
    args = typing.get_args(hint)
    if not args:
        return hint
    if typing.get_origin(hint) is typing.Annotated:
        inner = _remade(args[0], depth + 1)
        return hint if inner is args[0] else typing.Annotated[(inner, *hint.__metadata__)]
    if typing.get_origin(hint) is typing.Literal:
        return hint
    remade = tuple(_remade(a, depth + 1) for a in args)
    if all(new is old for new, old in zip(remade, args, strict=True)):
        return hint
    try:
        return hint.copy_with(remade)  # typing's aliases: List[X], Union[...], Optional
    except AttributeError:
        pass
    try:
        return typing.get_origin(hint)[remade]  # list[X], dict[K, V], X | Y
    except TypeError:
        return hint  # a form that cannot be rebuilt: left as it was


def _typed_dict(cls: Any, depth: int) -> Any:
    made = _MADE.get(cls)
    if made is None:
        hints = typing.get_type_hints(cls, include_extras=True)
        required = getattr(cls, "__required_keys__", frozenset(hints))
        fields = {
            key: (
                typing_extensions.Required[_remade(value, depth + 1)]
                if key in required
                else typing_extensions.NotRequired[_remade(value, depth + 1)]
            )
            for key, value in hints.items()
        }
        # The functional form, as a call: its name is known only at run time.
        make: Any = typing_extensions.TypedDict
        made = make(cls.__name__, fields)
        made.__doc__ = cls.__doc__
        _MADE[cls] = made
    return made


KeyFn = Callable[..., str | None]


@dataclass(frozen=True)
class ToolSpec:
    """A wrapped tool: the callable and how its results can be recovered."""

    name: str
    fn: Callable[..., Any]
    determinism: Determinism
    key: KeyFn | None
    max_age: timedelta | None
    media_type: str | None
    signature: inspect.Signature
    description: str = ""
    # The local names where the function was defined, for annotations that name them.
    namespace: Mapping[str, Any] | None = field(default=None, repr=False, compare=False)

    @property
    def is_async(self) -> bool:
        return inspect.iscoroutinefunction(self.fn)

    def arguments(
        self, args: Sequence[Any], kwargs: Mapping[str, Any], validated: bool = False
    ) -> tuple[dict[str, Any], Sequence[Any], Mapping[str, Any]]:
        """A Python call's arguments, validated as `pydantic.validate_call` does (lax):
        by parameter name with defaults applied, as recorded (the validated values, as
        JSON), and the positional and keyword arguments the function gets.

        Plain values of their annotated types pass as given (nothing to convert: the
        fast, common case). Raises `ArgumentError` naming the argument that does not
        fit. Defaults are not validated. `validated`: the values are a model's that
        `parse` validated already; validating them again would run a validator that
        changes its value (dollars to cents) twice."""
        names = self.positional_names
        if not kwargs and names is not None and len(args) == len(names):
            # The common case, all arguments given by position: no need for bind().
            arguments = dict(zip(names, args, strict=True))
        else:
            bound = self.signature.bind(*args, **kwargs)
            bound.apply_defaults()
            arguments = dict(bound.arguments)
        if validated:
            return self.parameters.recorded(arguments), args, kwargs
        for name, allowed, default in self.parameters.fast:
            if allowed is None:
                continue
            value = arguments.get(name, default)
            if type(value) in allowed or (value is default and type(default) in JSON_SCALARS):
                continue
            values, recorded = self.parameters.validate_python(arguments)
            return (recorded, *self.unbind(values))
        return arguments, args, kwargs

    @functools.cached_property
    def positional_names(self) -> tuple[str, ...] | None:
        """The parameters' names when each can be given by position and none is variadic."""
        kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
        params = self.signature.parameters.values()
        return tuple(p.name for p in params) if all(p.kind in kinds for p in params) else None

    def unbind(self, arguments: Mapping[str, Any]) -> tuple[list[Any], dict[str, Any]]:
        """Positional and keyword arguments that repeat a recorded call."""
        positional: list[Any] = []
        keywords: dict[str, Any] = {}
        for p in self.signature.parameters.values():
            if p.name not in arguments:
                continue
            value = arguments[p.name]
            if p.kind is p.VAR_POSITIONAL:
                positional.extend(value)
            elif p.kind is p.VAR_KEYWORD:
                keywords.update(value)
            elif p.kind is p.KEYWORD_ONLY:
                keywords[p.name] = value
            else:
                positional.append(value)
        return positional, keywords

    @functools.cached_property
    def parameters(self) -> Parameters:
        """The parameters as pydantic sees them: the schema, the checks, the docs."""
        return Parameters(self)

    @property
    def input_schema(self) -> dict[str, Any]:
        """The JSON Schema of the parameters, derived by pydantic from the annotations
        (enums, models, `Annotated[..., Field(...)]`, defaults) and the docstring's
        `Args:`: the schema `pydantic.TypeAdapter` gives for the function."""
        return self.parameters.schema

    def parse(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """Validate a model's arguments (JSON) strictly, and give their values by name
        (`unbind` makes the call of them). A string where an integer is wanted is
        refused; an enum is given by value, a model as an object; `null` stands for an
        argument left out. Raises `ArgumentError` naming the argument that does not
        fit, in the one line `argument_error` writes."""
        return self.parameters.validate_json(arguments)


_VARIADIC = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)


def named_parameters(signature: inspect.Signature) -> list[inspect.Parameter]:
    """The parameters a tool's schema lists by name: all but `*args` and `**kwargs`."""
    return [p for p in signature.parameters.values() if p.kind not in _VARIADIC]


class Parameters:
    """A tool's named parameters as a pydantic model, built on first use.

    Each parameter becomes a field under its own name (as an alias, so that no name can
    clash with pydantic's), typed by its resolved annotation; one that cannot be
    resolved, or that pydantic cannot handle, is left untyped (`Any`) and its values
    pass unchecked, as JSON. `*args` and `**kwargs` are not validated; a model's
    arguments beyond the named ones go to `**kwargs` if the function has one, else they
    are refused.
    """

    def __init__(self, spec: ToolSpec) -> None:
        self.spec = spec
        params = spec.signature.parameters.values()
        self.named = named_parameters(spec.signature)
        self.var_keyword = next(
            (p.name for p in params if p.kind is inspect.Parameter.VAR_KEYWORD), None
        )
        self.description, self.docs = split_docstring(spec.description)
        self.hints = _resolve(spec, self.named)
        self.fast: tuple[tuple[str, frozenset[type] | None, Any], ...] = tuple(
            (p.name, _allowed(self.hints[p.name]), p.default) for p in self.named
        )

    @functools.cached_property
    def model(self) -> type[BaseModel]:
        try:
            return self._model(self.hints)
        except Exception:  # some annotation pydantic cannot handle: leave those untyped
            for name, hint in self.hints.items():
                try:
                    TypeAdapter(hint)
                except Exception:
                    self.hints[name] = Any
            return self._model(self.hints)

    def _model(self, hints: Mapping[str, Any]) -> type[BaseModel]:
        fields: dict[str, Any] = {}
        for i, p in enumerate(self.named):
            hint = hints[p.name]
            extra: dict[str, Any] = {}
            if p.name in self.docs and not _described(hint):  # the Annotated one wins
                extra["description"] = self.docs[p.name]
            default = ... if p.default is p.empty else p.default
            fields[f"p{i}"] = (hint, Field(default, alias=p.name, **extra))
        config = ConfigDict(
            extra="allow" if self.var_keyword else "forbid",
            protected_namespaces=(),
        )
        model: type[BaseModel] = create_model(self.spec.name, __config__=config, **fields)
        return model

    @functools.cached_property
    def fields(self) -> list[tuple[str, str, bool]]:
        """(parameter name, field name, typed) for each named parameter."""
        self.model  # noqa: B018  (first: building it may leave some hints untyped)
        return [
            (p.name, f"p{i}", self.hints[p.name] not in (Any, object))
            for i, p in enumerate(self.named)
        ]

    @functools.cached_property
    def schema(self) -> dict[str, Any]:
        schema = self.model.model_json_schema(by_alias=True, schema_generator=_SchemaGenerator)
        schema.pop("title", None)  # the model's name: the tool's name says it already
        return schema

    def validate_python(
        self, arguments: Mapping[str, Any]
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        given = {
            p.name: arguments[p.name]
            for p in self.named
            if p.name in arguments and arguments[p.name] is not p.default
        }
        try:
            model = self.model.model_validate(given)
        except ValidationError as exc:
            raise argument_error(self.spec.name, exc, self.takes) from None
        values = dict(arguments)
        dump: set[str] = set()
        for name, attr, typed in self.fields:
            values[name] = getattr(model, attr)
            if typed and (name in given or type(values[name]) not in JSON_SCALARS):
                dump.add(attr)
        return values, self._with_dumped(arguments, model, dump)

    def recorded(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """Arguments validated already, as recorded: each typed value that is not a plain
        JSON scalar written as JSON (as `validate_python` records it), no validator run
        again."""
        dump = {
            attr
            for name, attr, typed in self.fields
            if typed and name in arguments and type(arguments[name]) not in JSON_SCALARS
        }
        if not dump:
            return dict(arguments)
        by_field = {attr: arguments[name] for name, attr, _ in self.fields if attr in dump}
        return self._with_dumped(arguments, self.model.model_construct(**by_field), dump)

    def _with_dumped(
        self, arguments: Mapping[str, Any], model: BaseModel, dump: set[str]
    ) -> dict[str, Any]:
        """`arguments` as recorded: the fields in `dump` as `model` writes them as JSON."""
        recorded = dict(arguments)
        if dump:
            dumped = self._dump(model, dump)
            for name, attr, _ in self.fields:
                if attr in dump:
                    recorded[name] = dumped[name]
        return recorded

    def _dump(self, model: BaseModel, fields: set[str]) -> dict[str, Any]:
        try:
            dumped: dict[str, Any] = model.model_dump(
                mode="json", by_alias=True, include=fields, warnings=False
            )
        except Exception as exc:
            for name, attr, _ in self.fields:
                if attr in fields:
                    try:
                        model.model_dump(mode="json", include={attr}, warnings=False)
                    except Exception:
                        raise ArgumentError(
                            f"argument {name!r} cannot be written as JSON: {one_line(exc)}"
                        ) from None
            raise ArgumentError(
                f"the arguments cannot be written as JSON: {one_line(exc)}"
            ) from exc
        return dumped

    @functools.cached_property
    def internal(self) -> frozenset[str]:
        """The model's own field names ("p0", ...) that name no parameter: pydantic reads
        fields by their aliases only, and would drop these without a word."""
        return frozenset(f for _, f, _ in self.fields) - set(self.spec.signature.parameters)

    @functools.cached_property
    def defaulted(self) -> frozenset[str]:
        """The parameters that have a default: a model's `null` for one is left out."""
        return frozenset(p.name for p in self.named if p.default is not p.empty)

    @functools.cached_property
    def takes(self) -> tuple[str, ...]:
        """The arguments' names, as an error lists them."""
        return tuple(p.name for p in self.named)

    def validate_json(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        tool = self.spec.name
        if stray := sorted(self.internal & set(arguments)):
            raise ArgumentError(f"{tool}: {problem(stray[0], not_taken(self.takes))}")
        left_out: frozenset[str] = frozenset()
        if None in arguments.values():  # `null` stands for an argument left out
            defaulted = self.defaulted
            arguments = {k: v for k, v in arguments.items() if v is not None or k not in defaulted}
            left_out = frozenset(k for k, v in arguments.items() if v is None)
        try:
            text = canonical_args(arguments)  # names a value JSON cannot hold
        except ArgumentError as exc:
            raise ArgumentError(f"{tool}: {exc}") from None
        try:
            model = self.model.model_validate_json(text, strict=True)
        except ValidationError as exc:
            raise argument_error(tool, exc, self.takes, left_out=left_out) from None
        # The arguments given, as a Python call gives them: one left out takes its
        # default in the function (and a key function sees the same as on a direct call).
        values = {name: getattr(model, attr) for name, attr, _ in self.fields if name in arguments}
        if self.var_keyword is not None:
            values[self.var_keyword] = dict(model.model_extra or {})
        return values


class _SchemaGenerator(GenerateJsonSchema):
    """pydantic's JSON Schema, with `{}` (any value) for a type JSON cannot describe and
    no warnings (a default that is not JSON is left out of the schema)."""

    def handle_invalid_for_json_schema(self, schema: Any, error_info: str) -> JsonSchemaValue:
        return {}

    def emit_warning(self, kind: JsonSchemaWarningKind, detail: str) -> None:
        return None


def _resolve(spec: ToolSpec, params: Sequence[inspect.Parameter]) -> dict[str, Any]:
    """Each parameter's annotation, resolved (`Annotated` kept); `Any` where there is
    none or it cannot be resolved."""
    fn = inspect.unwrap(spec.fn)
    globalns = getattr(fn, "__globals__", None)
    localns = dict(spec.namespace) if spec.namespace is not None else None
    hints: dict[str, Any] = {}
    for p in params:
        hint: Any = Any
        if p.annotation is not p.empty:
            holder = _Holder()
            holder.__annotations__ = {"value": p.annotation}
            try:
                hint = typing.get_type_hints(holder, globalns, localns, include_extras=True)[
                    "value"
                ]
            except Exception:  # an unresolvable name: described and passed as untyped
                hint = Any
        hints[p.name] = readable(hint)
    return hints


class _Holder:
    """Carries one annotation to `typing.get_type_hints`."""


def _allowed(hint: Any) -> frozenset[type] | None:
    """The exact types a value of `hint` may have to need no validation: None for any
    value (no annotation, `Any`, `object`), an empty set when pydantic must look."""
    if hint is Any or hint is object:
        return None
    if hint is None or hint is type(None):
        return frozenset({type(None)})
    origin = typing.get_origin(hint)
    if origin is typing.Annotated:
        metadata = hint.__metadata__
        plain = all(isinstance(m, FieldInfo) and not m.metadata for m in metadata)
        return _allowed(typing.get_args(hint)[0]) if plain else frozenset()
    if origin in (typing.Union, types.UnionType):
        found: set[type] = set()
        for arg in typing.get_args(hint):
            allowed = _allowed(arg)
            if allowed is None:
                return None
            if not allowed:
                return frozenset()
            found |= allowed
        return frozenset(found)
    if hint in JSON_SCALARS:
        return frozenset({hint})
    return frozenset()


def _described(hint: Any) -> bool:
    """Whether an `Annotated` hint carries its own description."""
    if typing.get_origin(hint) is not typing.Annotated:
        return False
    return any(isinstance(m, FieldInfo) and m.description for m in hint.__metadata__)
