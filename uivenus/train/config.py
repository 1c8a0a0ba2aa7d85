"""YAML files into config dataclasses, validated by pydantic: an unknown key or a value of the wrong type is an
error that names the file and the key path, so a typo never silently trains with a default.

The configs stay plain frozen dataclasses; pydantic checks a YAML tree against their annotations (in its lax mode:
`1e-5` read as text is a float, a list a tuple, a string a `Path` or an enum member), takes no key a dataclass does
not have, and runs each class's `__post_init__` checks. Command-line style overrides (`lr=1e-4`,
`sources.0.path=runs/x`) are applied to the YAML tree first, their values read as YAML.
"""

from __future__ import annotations

import copy
import dataclasses
import difflib
import functools
import inspect
import types
import typing
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

import pydantic
import yaml
from typing_extensions import NotRequired, TypedDict, is_typeddict

__all__ = ["ConfigError", "apply_overrides", "call_with_options", "check_settings", "config_to_dict", "find_config",
           "from_dict", "load_config", "save_config", "validate_options"]

C = TypeVar("C")

#: Every mapping validated here, and every dataclass inside one, takes only the keys it declares.
_STRICT = pydantic.ConfigDict(extra="forbid", arbitrary_types_allowed=True)


class ConfigError(ValueError):
    """A config file or option is wrong; the message names the key path and what is allowed there."""


def _keys(name: str, hints: Mapping[str, Any], required: Collection[str]) -> type:
    """The type of a mapping with these keys (the `required` ones present), each value of its hint's type."""
    fields = {key: hint if key in required else NotRequired[hint] for key, hint in hints.items()}
    return pydantic.with_config(_STRICT)(TypedDict(name, fields))  # type: ignore[operator]


@functools.cache
def _adapter(keys: type) -> pydantic.TypeAdapter:
    return pydantic.TypeAdapter(keys)


@functools.cache
def _config_keys(cls: type) -> type:
    """A config class as the one key of a mapping, so that its nested dataclasses take no unknown keys either."""
    return _keys(cls.__name__, {"config": cls}, {"config"})


@functools.cache
def _settings_keys(cls: type) -> type:
    return _keys(f"{cls.__name__} settings", _fields(cls), ())


@functools.cache
def _options_keys(fn: Callable[..., Any]) -> type:
    hints = typing.get_type_hints(fn)
    parameters = [p for p in inspect.signature(fn).parameters.values()
                  if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    return _keys(f"{fn.__name__} options", {p.name: hints.get(p.name, Any) for p in parameters},
                 {p.name for p in parameters if p.default is p.empty})


def _fields(hint: Any) -> dict[str, Any]:
    """The keys a dataclass or TypedDict takes, with their annotations ({} for other types)."""
    if dataclasses.is_dataclass(hint):
        hints = typing.get_type_hints(hint)
        return {f.name: hints[f.name] for f in dataclasses.fields(hint) if f.init}
    return typing.get_type_hints(hint) if is_typeddict(hint) else {}


def _known_keys(hint: Any, loc: Sequence[int | str]) -> set[str]:
    """The keys taken at `loc` in a value of type `hint`, following fields, container items and union members."""
    args = [arg for arg in typing.get_args(hint) if arg is not Ellipsis]
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        return {key for arg in args for key in _known_keys(arg, loc)}
    fields = _fields(hint)
    if not loc:
        return set(fields)
    if fields:
        return _known_keys(fields.get(str(loc[0])), loc[1:])
    return _known_keys(args[-1], loc[1:]) if args else set()  # tuple[X, ...], Mapping[K, X]: the item type


def _message(error: Mapping[str, Any], known: Collection[str]) -> str:
    """One pydantic error in words; an unknown key comes with the closest known key, or with all of them."""
    kind = error["type"]
    if kind in ("extra_forbidden", "unexpected_keyword_argument"):
        close = difflib.get_close_matches(str(error["loc"][-1]), known, n=1)
        return f"unknown key; did you mean {close[0]!r}?" if close else f"unknown key; use one of {sorted(known)}"
    if kind == "value_error":  # the class's own check (__post_init__) says what is wrong
        return str(error["ctx"]["error"])
    if kind == "missing":
        return "required key is missing"
    return f"{error['msg']}, got {error['input']!r}"


def _validate(keys: type, data: Any, where: str = "", *, skip: int = 0, source: str = "") -> Any:
    """`data` validated as `keys`; else a ConfigError with one line per problem, `source: where.key.path: what`
    (the first `skip` parts of pydantic's key path are the wrapping of `_config_keys`)."""
    try:
        return _adapter(keys).validate_python(data)
    except pydantic.ValidationError as exc:
        lines = []
        for error in exc.errors():
            path = ".".join(str(part) for part in [*([where] if where else []), *error["loc"][skip:]])
            message = _message(error, _known_keys(keys, error["loc"][:-1]))
            lines.append(": ".join(part for part in (source, path, message) if part))
        raise ConfigError("\n".join(lines)) from None


def from_dict(cls: type[C], data: Any, path: str = "", *, source: str = "") -> C:
    """An instance of the config dataclass `cls` from a mapping; errors name their key below `path` (and the file
    `source`)."""
    return _validate(_config_keys(cls), {"config": data}, path, skip=1, source=source)["config"]


def check_settings(cls: type, settings: Mapping[str, Any], path: str = "") -> None:
    """Check part of a config of the dataclass `cls`, completed later: every key one of its fields, every value of
    that field's type."""
    _validate(_settings_keys(cls), settings, path)


def validate_options(fn: Callable[..., Any], options: Mapping[str, Any], path: str = "") -> dict[str, Any]:
    """`options` checked and converted against the parameters of `fn` (unknown or missing ones are errors)."""
    return _validate(_options_keys(fn), options, path)


def call_with_options(fn: Callable[..., Any], options: Mapping[str, Any], path: str = "") -> Any:
    """`fn(**options)`, each option checked against its parameter's annotation first."""
    return fn(**validate_options(fn, options, path))


def _parse_override(text: str) -> tuple[list[str], Any]:
    key, sep, raw = text.partition("=")
    if not sep or not key.strip():
        raise ConfigError(f"override {text!r} must look like key=value (dotted keys and list indices allowed)")
    return key.strip().split("."), yaml.safe_load(raw) if raw.strip() else ""


def apply_overrides(data: Mapping[str, Any], overrides: Sequence[str]) -> dict[str, Any]:
    """A copy of the YAML tree with `key.sub=value` overrides set (values are read as YAML: `1e-4`, `[a, b]`)."""
    tree: Any = copy.deepcopy(dict(data))
    for text in overrides:
        keys, value = _parse_override(text)
        node = tree
        for depth, key in enumerate(keys):
            last = depth == len(keys) - 1
            if isinstance(node, list):
                if not key.isdigit() or int(key) >= len(node):
                    raise ConfigError(f"override {text!r}: {key!r} is not an index of a {len(node)}-item list")
                index: Any = int(key)
            else:
                index = key
                if not last:
                    node.setdefault(key, {})
            if last:
                node[index] = value
            else:
                node = node[index]
    return tree


#: The configs that come with uivenus: the checkout's `configs/` folder, beside the package in a source checkout or
#: an editable install (a wheel does not carry them, so there this folder does not exist and nothing falls back).
SHIPPED_CONFIGS = Path(__file__).resolve().parents[2] / "configs"


def find_config(path: str | Path) -> Path:
    """`path` where it names a file; else, for a relative path, the shipped config it names: `configs/sft_tiny.yaml`
    (the README's spelling, from any directory), `sft_tiny.yaml` or `sft_tiny` all find `SHIPPED_CONFIGS/sft_tiny.yaml`.
    A file in the working directory always wins. The error lists every path tried."""
    file = Path(path)
    if file.is_file():
        return file
    tried = [file]
    if not file.is_absolute() and SHIPPED_CONFIGS.is_dir():
        parts = file.parts[1:] if file.parts[:1] == (SHIPPED_CONFIGS.name,) else file.parts
        if parts:
            shipped = SHIPPED_CONFIGS.joinpath(*parts)
            tried.append(shipped)
            if shipped.suffix not in (".yaml", ".yml"):
                tried.append(shipped.with_name(shipped.name + ".yaml"))
    for candidate in tried[1:]:
        if candidate.is_file():
            return candidate
    raise ConfigError(f"no config file {str(path)!r}; tried " + ", ".join(str(p) for p in tried))


def load_config(path: str | Path, cls: type[C], overrides: Sequence[str] = ()) -> C:
    """Read a YAML file (found by `find_config`) into the dataclass `cls`, after applying `overrides`."""
    file = find_config(path)
    try:
        data = yaml.safe_load(file.read_text(encoding="utf-8")) or {}
    except OSError as exc:
        raise ConfigError(f"cannot read config {file}: {exc.strerror}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{file} is not valid YAML: {exc}") from None
    if not isinstance(data, Mapping):
        raise ConfigError(f"{file} must hold a mapping of {cls.__name__} fields at the top level")
    return from_dict(cls, apply_overrides(data, overrides), source=str(file))


def _frozen_mapping(value: Any) -> Any:
    """What pydantic cannot write by itself: the read-only mappings (MappingProxyType) frozen configs hold."""
    if isinstance(value, types.MappingProxyType):
        return dict(value)
    raise TypeError(f"cannot write {type(value).__name__} {value!r} into a config file")


def config_to_dict(config: Any) -> dict[str, Any]:
    """The YAML-ready form of a config dataclass (what `from_dict` reads back to an equal config). Read-only
    mappings sit where the annotations promise a dict: they are written as dicts, without pydantic's warning."""
    wrapped = _adapter(_config_keys(type(config))).dump_python({"config": config}, mode="json",
                                                                fallback=_frozen_mapping, warnings=False)
    return wrapped["config"]


def save_config(config: Any, path: str | Path) -> Path:
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(yaml.safe_dump(config_to_dict(config), sort_keys=False), encoding="utf-8")
    return out
