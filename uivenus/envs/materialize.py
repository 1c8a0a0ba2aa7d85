"""Materialization plans: the files, folders, app settings and launches a desktop task needs, set up and undone.

A plan is JSON data (`TaskSpec.setup["materialize"]`), never code: file paths are relative and must stay
inside the episode's sandbox root, launches are argv lists run without a shell, and `{root}` / `{home}`
in an argv item or an environment value are the only substitutions. `apply(plan, root, home)` writes the
plan and returns a `Materialized` that remembers everything it created or overwrote, so `undo()` puts the
filesystem back as it was: created files and folders removed, overwritten files restored byte for byte.

`home` is a private home directory for the launched apps (HOME and the XDG directories point into it), so
an app starts with the plan's settings and no state left by another episode. The env that runs the plan
launches `Materialized.commands` itself (it waits for their windows and stops them on the next reset).
"""

from __future__ import annotations

import base64
import binascii
import re
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from types import MappingProxyType
from typing import Any

from uivenus.envs.base import SetupError

#: The only substitutions a plan may use, in argv items and environment values.
PLACEHOLDERS = ("{root}", "{home}")
#: Environment every launched app gets (before the plan's own `settings.env`): its state lives in `home`.
HOME_ENV: Mapping[str, str] = MappingProxyType({
    "HOME": "{home}",
    "XDG_CONFIG_HOME": "{home}/.config",
    "XDG_DATA_HOME": "{home}/.local/share",
    "XDG_CACHE_HOME": "{home}/.cache",
    "XDG_STATE_HOME": "{home}/.local/state",
})
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_PLAN_KEYS = frozenset({"files", "folders", "launch", "settings"})
_SETTINGS_KEYS = frozenset({"env", "files"})


class MaterializeError(SetupError):
    """A materialization plan is malformed or unsafe (a path leaving the root, a shell string); fix the plan data."""


def relative_path(relative: Any, where: str) -> PurePosixPath:
    """A plan path checked as text: relative, POSIX, naming something below its base (no `..`, not empty)."""
    if not isinstance(relative, str) or not relative or "\0" in relative or "\\" in relative:
        raise MaterializeError(f"{where}: {relative!r} must be a non-empty relative POSIX path like 'docs/a.txt'")
    pure = PurePosixPath(relative)
    if pure.is_absolute() or ".." in pure.parts or not pure.parts:
        raise MaterializeError(f"{where}: {relative!r} must stay inside the sandbox root (relative, no '..')")
    return pure


def safe_path(base: Path, relative: Any, where: str) -> Path:
    """`base / relative` after `relative_path`, also refusing links in `base` that would lead outside it."""
    target = base / relative_path(relative, where)
    if not target.resolve().is_relative_to(base.resolve()):
        raise MaterializeError(f"{where}: {relative!r} resolves outside the sandbox root {base} (through a link)")
    return target


def _substitute(value: str, root: Path, home: Path | None) -> str:
    return value.replace("{root}", str(root)).replace("{home}", str(home))


@dataclass(frozen=True)
class FileSpec:
    """One file to write: UTF-8 `text`, or raw bytes as `base64`; exactly one of them."""

    path: str
    text: str | None = None
    base64: str | None = None

    def __post_init__(self) -> None:
        if (self.text is None) == (self.base64 is None):
            raise MaterializeError(f"file {self.path!r}: give exactly one of 'text' or 'base64'")
        if self.text is not None and not isinstance(self.text, str):
            raise MaterializeError(f"file {self.path!r}: 'text' must be a string, got {type(self.text).__name__}")
        if self.base64 is not None:
            try:
                base64.b64decode(self.base64, validate=True)
            except (binascii.Error, TypeError, ValueError):
                raise MaterializeError(f"file {self.path!r}: 'base64' is not valid base64") from None
        relative_path(self.path, "file path")

    @property
    def content(self) -> bytes:
        return self.text.encode("utf-8") if self.text is not None else base64.b64decode(self.base64 or "")

    def to_dict(self) -> dict[str, str]:
        return {"path": self.path, **({"text": self.text} if self.text is not None else {"base64": self.base64 or ""})}

    @classmethod
    def from_dict(cls, data: Any, where: str) -> FileSpec:
        if not isinstance(data, Mapping) or set(data) - {"path", "text", "base64"} or "path" not in data:
            raise MaterializeError(f"{where} must be {{'path': ..., 'text': ...}} or {{'path': ..., 'base64': ...}}, "
                                   f"got {data!r}")
        return cls(**dict(data))


@dataclass(frozen=True)
class Settings:
    """App settings: environment variables for launched apps and config files written under their `home`."""

    env: Mapping[str, str] = field(default_factory=dict)
    files: tuple[FileSpec, ...] = ()

    def __post_init__(self) -> None:
        for name, value in self.env.items():
            if not isinstance(name, str) or not _ENV_NAME.fullmatch(name):
                raise MaterializeError(f"settings.env: {name!r} is not a valid environment variable name")
            if not isinstance(value, str) or "\0" in value:
                raise MaterializeError(f"settings.env[{name!r}] must be a string without NUL, got {value!r}")
        object.__setattr__(self, "env", MappingProxyType(dict(self.env)))
        object.__setattr__(self, "files", tuple(self.files))
        _unique([f.path for f in self.files], "settings.files")


@dataclass(frozen=True)
class MaterializePlan:
    """What an episode needs before it starts: `files` and `folders` in the root, app `settings`, `launch` argvs."""

    files: tuple[FileSpec, ...] = ()
    folders: tuple[str, ...] = ()
    launch: tuple[tuple[str, ...], ...] = ()
    settings: Settings = field(default_factory=Settings)

    def __post_init__(self) -> None:
        object.__setattr__(self, "files", tuple(self.files))
        object.__setattr__(self, "folders", tuple(self.folders))
        object.__setattr__(self, "launch", tuple(tuple(argv) for argv in self.launch))
        for folder in self.folders:
            relative_path(folder, "folder")
        _unique([f.path for f in self.files], "files")
        clash = {str(PurePosixPath(f.path)) for f in self.files} & {str(PurePosixPath(d)) for d in self.folders}
        if clash:
            raise MaterializeError(f"{sorted(clash)} listed both as a file and as a folder")
        for i, argv in enumerate(self.launch):
            if not argv or not all(isinstance(a, str) and a and "\0" not in a for a in argv):
                raise MaterializeError(f"launch[{i}] must be a non-empty argv list of non-empty strings, got {argv!r}")
            if "=" in argv[0] or ("/" in argv[0] and not argv[0].startswith("/")):
                raise MaterializeError(f"launch[{i}][0] must be a program name or an absolute path, got {argv[0]!r}")

    def to_dict(self) -> dict[str, Any]:
        return {
            "files": [f.to_dict() for f in self.files],
            "folders": list(self.folders),
            "launch": [list(argv) for argv in self.launch],
            "settings": {"env": dict(self.settings.env), "files": [f.to_dict() for f in self.settings.files]},
        }

    @classmethod
    def from_dict(cls, data: Any) -> MaterializePlan:
        """Validate plan data (as stored in `TaskSpec.setup['materialize']`); errors name the bad field."""
        if not isinstance(data, Mapping):
            raise MaterializeError(f"setup['materialize'] must be a mapping, got {type(data).__name__}")
        unknown = set(data) - _PLAN_KEYS
        if unknown:
            raise MaterializeError(f"setup['materialize']: unknown key(s) {sorted(unknown)}; "
                                   f"known: {sorted(_PLAN_KEYS)}")
        settings = data.get("settings") or {}
        if not isinstance(settings, Mapping) or set(settings) - _SETTINGS_KEYS:
            raise MaterializeError(f"settings must be a mapping with keys {sorted(_SETTINGS_KEYS)}, got {settings!r}")
        env = settings.get("env") or {}
        if not isinstance(env, Mapping):
            raise MaterializeError(f"settings.env must map names to strings, got {env!r}")
        launch = data.get("launch") or ()
        if isinstance(launch, str) or not all(isinstance(argv, (list, tuple)) for argv in launch):
            raise MaterializeError(f"launch must be a list of argv lists (no shell strings), got {launch!r}")
        folders = data.get("folders") or ()
        if isinstance(folders, str):
            raise MaterializeError(f"folders must be a list of relative paths, got {folders!r}")
        return cls(
            files=tuple(FileSpec.from_dict(f, f"files[{i}]") for i, f in enumerate(_list(data.get("files"), "files"))),
            folders=tuple(folders),
            launch=tuple(tuple(argv) for argv in launch),
            settings=Settings(env=dict(env), files=tuple(
                FileSpec.from_dict(f, f"settings.files[{i}]")
                for i, f in enumerate(_list(settings.get("files"), "settings.files"))
            )),
        )


def _list(value: Any, where: str) -> Sequence[Any]:
    if value is None:
        return ()
    if not isinstance(value, (list, tuple)):
        raise MaterializeError(f"{where} must be a list, got {type(value).__name__}")
    return value


def _unique(paths: Sequence[str], where: str) -> None:
    seen = [str(PurePosixPath(p)) for p in paths]
    duplicates = sorted({p for p in seen if seen.count(p) > 1})
    if duplicates:
        raise MaterializeError(f"{where}: {duplicates} listed more than once")


@dataclass(frozen=True)
class LaunchCommand:
    """One app to start: its argv, the environment it adds, and its working directory (the root)."""

    argv: tuple[str, ...]
    env: Mapping[str, str]
    cwd: Path

    def via_env(self) -> list[str]:
        """The argv run through env(1), which sets the variables and directory and then execs the app (no shell)."""
        return ["env", "-C", str(self.cwd), "--", *(f"{k}={v}" for k, v in self.env.items()), *self.argv]


class Materialized:
    """A plan applied to `root` (and `home`); `undo()` restores every path the plan created or overwrote."""

    def __init__(self, root: Path, home: Path | None, env: Mapping[str, str], launch: tuple[tuple[str, ...], ...]
                 ) -> None:
        self.root, self.home, self.env = root, home, MappingProxyType(dict(env))
        self.commands = tuple(self.command(argv) for argv in launch)
        self._created: list[Path] = []  # files and directories the plan created, in creation order
        self._backups: list[tuple[Path, bytes, int]] = []  # files it overwrote: path, old bytes, old mode
        self.undone = False

    def command(self, argv: Sequence[str]) -> LaunchCommand:
        """How to run `argv` inside this materialization: placeholders filled, home environment, root as cwd."""
        return LaunchCommand(tuple(_substitute(a, self.root, self.home) for a in argv), self.env, self.root)

    def _mkdirs(self, directory: Path) -> None:
        missing = [p for p in (directory, *directory.parents) if not p.exists()]
        for path in reversed(missing):
            path.mkdir()
            self._created.append(path)

    def _write(self, base: Path, spec: FileSpec, where: str) -> None:
        target = safe_path(base, spec.path, where)
        self._mkdirs(target.parent)
        if target.is_dir() or target.is_symlink():
            raise MaterializeError(f"{where}: {spec.path!r} exists as a folder or a link in {base}; pick another path")
        if target.exists():
            self._backups.append((target, target.read_bytes(), target.stat().st_mode))
        else:
            self._created.append(target)
        target.write_bytes(spec.content)

    def undo(self) -> None:
        """Remove what the plan created and restore what it overwrote (idempotent; the apps are the env's)."""
        if self.undone:
            return
        self.undone = True
        for path, data, mode in reversed(self._backups):
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
            path.chmod(mode & 0o7777)
        for path in reversed(self._created):
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)

    def to_dict(self) -> dict[str, Any]:
        return {"root": str(self.root), "home": None if self.home is None else str(self.home), "undone": self.undone}


def apply(plan: MaterializePlan, root: str | Path, home: str | Path | None = None) -> Materialized:
    """Create the plan's folders and files under `root`, its settings files under `home`; resolve its launches.

    `root` and `home` may exist (what is in them stays, unless the plan overwrites it) or not (then they
    are created, and `undo()` removes them whole). `home` may be left out for a plan of files and folders
    only. A failure half-way undoes what was done and re-raises.
    """
    if home is None and (plan.launch or plan.settings.env or plan.settings.files):
        raise MaterializeError("a plan with launches or settings needs a home directory for its apps")
    root, home = Path(root).absolute(), None if home is None else Path(home).absolute()
    env = {name: _substitute(value, root, home) for name, value in {**HOME_ENV, **plan.settings.env}.items()}
    done = Materialized(root, home, env if home is not None else {}, plan.launch)
    try:
        done._mkdirs(root)
        for folder in plan.folders:
            done._mkdirs(safe_path(root, folder, "folder"))
        for spec in plan.files:
            done._write(root, spec, "file")
        if home is not None:
            done._mkdirs(home)
            for spec in plan.settings.files:
                done._write(home, spec, "settings file")
    except BaseException:
        done.undo()
        raise
    return done
