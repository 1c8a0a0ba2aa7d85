"""YAML files into config dataclasses, strictly: an unknown key or a value of the wrong type is an error that
names its path, so a typo never silently trains with a default.

Values are checked against the dataclass field annotations (`int`, `float`, `str`, `bool`, `X | None`, `tuple[X, ...]`,
`Mapping[str, X]`, enums, `Path`, nested dataclasses, `Literal[...]`); a class may read its own YAML form with a
`from_config(data, path)` classmethod. Command-line style overrides (`lr=1e-4`, `sources.0.path=runs/x`) are
applied to the YAML tree before checking.
"""

from __future__ import annotations

import dataclasses
import enum
import inspect
import re
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

import yaml

__all__ = ["ConfigError", "apply_overrides", "call_with_options", "coerce", "config_to_dict", "from_dict",
           "load_config", "save_config"]

C = TypeVar("C")


class ConfigError(ValueError):
    """A config file or option is wrong; the message names the key path and what is allowed there."""


def _where(path: str) -> str:
    return f"config key {path!r}" if path else "the config"


def _type_name(hint: Any) -> str:
    return getattr(hint, "__name__", None) or str(hint).replace("typing.", "")


def _coerce_union(value: Any, hint: Any, path: str) -> Any:
    args = typing.get_args(hint)
    if value is None:
        if type(None) in args:
            return None
        raise ConfigError(f"{_where(path)} must not be null")
    errors = []
    for arg in args:
        if arg is type(None):
            continue
        try:
            return coerce(value, arg, path)
        except ConfigError as exc:
            errors.append(str(exc))
    raise ConfigError(f"{_where(path)}: {value!r} fits none of {_type_name(hint)} ({'; '.join(errors)})")


def _coerce_sequence(value: Any, hint: Any, path: str) -> Any:
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Sequence):
        raise ConfigError(f"{_where(path)} must be a list, got {value!r}")
    args = typing.get_args(hint)
    origin = typing.get_origin(hint)
    if origin is tuple and args and args[-1] is not Ellipsis:
        if len(value) != len(args):
            raise ConfigError(f"{_where(path)} must hold {len(args)} items, got {len(value)}")
        return tuple(coerce(v, a, f"{path}.{i}") for i, (v, a) in enumerate(zip(value, args)))
    item = args[0] if args else Any
    items = [coerce(v, item, f"{path}.{i}") for i, v in enumerate(value)]
    return items if origin is list else tuple(items)


def _coerce_mapping(value: Any, hint: Any, path: str) -> Any:
    if not isinstance(value, Mapping):
        raise ConfigError(f"{_where(path)} must be a mapping, got {value!r}")
    key_hint, value_hint = typing.get_args(hint) or (Any, Any)
    return {coerce(k, key_hint, f"{path}.{k}"): coerce(v, value_hint, f"{path}.{k}") for k, v in value.items()}


#: YAML 1.1 (PyYAML) reads `1e-5` as a string; a float field takes such a plain number written that way.
_FLOAT_TEXT = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")


def _coerce_scalar(value: Any, hint: type, path: str) -> Any:
    if hint is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if hint is float and isinstance(value, str) and _FLOAT_TEXT.fullmatch(value.strip()):
        return float(value)
    if hint is Path and isinstance(value, str):
        return Path(value)
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        try:
            return hint(value)
        except ValueError:
            raise ConfigError(f"{_where(path)} must be one of {[m.value for m in hint]}, got {value!r}") from None
    if (hint in (int, float) and isinstance(value, bool)) or not isinstance(value, hint):
        raise ConfigError(f"{_where(path)} must be {_type_name(hint)}, got {value!r}")
    return value


#: How a value is checked, by the origin of its annotation (`X | None`, `tuple[...]`, `Mapping[...]`, ...).
_BY_ORIGIN: Mapping[Any, Callable[[Any, Any, str], Any]] = {
    typing.Union: _coerce_union,
    types.UnionType: _coerce_union,
    tuple: _coerce_sequence,
    list: _coerce_sequence,
    Sequence: _coerce_sequence,
    dict: _coerce_mapping,
    Mapping: _coerce_mapping,
}


def coerce(value: Any, hint: Any, path: str = "") -> Any:
    """`value` (parsed YAML) checked and converted to the annotation `hint`; ConfigError when it does not fit."""
    if hint is Any:
        return value
    origin = typing.get_origin(hint)
    if origin is typing.Literal:
        if value not in typing.get_args(hint):
            raise ConfigError(f"{_where(path)} must be one of {list(typing.get_args(hint))}, got {value!r}")
        return value
    if origin in _BY_ORIGIN:
        return _BY_ORIGIN[origin](value, hint, path)
    if hint in _BY_ORIGIN:  # a bare `tuple` / `dict`
        return _BY_ORIGIN[hint](value, hint, path)
    if hasattr(hint, "from_config"):
        return hint.from_config(value, path)
    if dataclasses.is_dataclass(hint):
        if isinstance(value, hint):
            return value
        return from_dict(hint, value, path)  # type: ignore[arg-type]
    if value is None:
        raise ConfigError(f"{_where(path)} must not be null")
    return _coerce_scalar(value, hint, path)


def from_dict(cls: type[C], data: Any, path: str = "") -> C:
    """An instance of the dataclass `cls` from a mapping; unknown keys and missing required keys are errors."""
    if not isinstance(data, Mapping):
        raise ConfigError(f"{_where(path)} must be a mapping of {cls.__name__} fields, got {data!r}")
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls) if f.init}  # type: ignore[arg-type]
    unknown = sorted(set(data) - set(fields))
    if unknown:
        raise ConfigError(f"unknown key(s) {unknown} in {path or cls.__name__}; {cls.__name__} takes {sorted(fields)}")
    missing = sorted(name for name, f in fields.items() if name not in data
                     and f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING)
    if missing:
        raise ConfigError(f"{path or cls.__name__} is missing required key(s) {missing}")
    kwargs = {name: coerce(value, hints[name], f"{path}.{name}" if path else name) for name, value in data.items()}
    try:
        return cls(**kwargs)
    except (TypeError, ValueError) as exc:
        if isinstance(exc, ConfigError):
            raise
        raise ConfigError(f"{path or cls.__name__}: {exc}") from None


def call_with_options(fn: Callable[..., Any], options: Mapping[str, Any], path: str = "") -> Any:
    """Call `fn(**options)` with each option checked against its parameter annotation (unknown ones are errors)."""
    signature = inspect.signature(fn)
    hints = typing.get_type_hints(fn)
    accepted = [name for name, p in signature.parameters.items()
                if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    unknown = sorted(set(options) - set(accepted))
    if unknown:
        raise ConfigError(f"unknown option(s) {unknown} at {path or fn.__name__}; it takes {accepted}")
    kwargs = {name: coerce(value, hints.get(name, Any), f"{path}.{name}" if path else name)
              for name, value in options.items()}
    try:
        signature.bind(**kwargs)
    except TypeError as exc:
        raise ConfigError(f"{path or fn.__name__}: {exc}") from None
    return fn(**kwargs)


def _parse_override(text: str) -> tuple[list[str], Any]:
    key, sep, raw = text.partition("=")
    if not sep or not key.strip():
        raise ConfigError(f"override {text!r} must look like key=value (dotted keys and list indices allowed)")
    return key.strip().split("."), yaml.safe_load(raw) if raw.strip() else ""


def apply_overrides(data: Mapping[str, Any], overrides: Sequence[str]) -> dict[str, Any]:
    """A copy of the YAML tree with `key.sub=value` overrides set (values are read as YAML: `1e-4`, `[a, b]`)."""
    import copy

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


def load_config(path: str | Path, cls: type[C], overrides: Sequence[str] = ()) -> C:
    """Read a YAML file into the dataclass `cls`, after applying `overrides`."""
    file = Path(path)
    try:
        data = yaml.safe_load(file.read_text(encoding="utf-8")) or {}
    except OSError as exc:
        raise ConfigError(f"cannot read config {file}: {exc.strerror}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{file} is not valid YAML: {exc}") from None
    if not isinstance(data, Mapping):
        raise ConfigError(f"{file} must hold a mapping of {cls.__name__} fields at the top level")
    return from_dict(cls, apply_overrides(data, overrides))


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        if hasattr(value, "to_config"):
            return value.to_config()
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value) if f.init}
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, Path):
        return str(value)
    return value


def config_to_dict(config: Any) -> dict[str, Any]:
    """The YAML-ready form of a config dataclass (what `from_dict` reads back to an equal config)."""
    return _plain(config)


def save_config(config: Any, path: str | Path) -> Path:
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(yaml.safe_dump(config_to_dict(config), sort_keys=False), encoding="utf-8")
    return out
