"""One OSWorld episode on a desktop: its isolated root, its context, its config steps run, and its teardown.

`DesktopEnv.reset` starts a session for a task whose `setup["osworld"]` holds the original task's config;
the session makes the root (bubblewrap, or the bare host only with `unsafe_host`), seeds the home the way
OSWorld's VM snapshot has it (apps past their first-start dialogs), runs the config steps, and on `close()`
kills the task's processes and deletes the root. The checker ("osworld") evaluates on `session.context`.
"""

from __future__ import annotations

import socket
import tempfile
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

from uivenus.envs.osworld.context import Desktop, TaskContext, default_downloads
from uivenus.envs.osworld.isolation import IsolatedRoot, Root, UnsafeHost
from uivenus.envs.osworld.setup_steps import run_steps

__all__ = ["HOME_SEED", "OSWorldSession"]

_LIBREOFFICE_SETTINGS = """<?xml version="1.0" encoding="UTF-8"?>
<oor:items xmlns:oor="http://openoffice.org/2001/registry" xmlns:xs="http://www.w3.org/2001/XMLSchema" \
xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
<item oor:path="/org.openoffice.Setup/Office"><prop oor:name="ooSetupLastVersion" oor:op="fuse">\
<value>7.4</value></prop></item>
<item oor:path="/org.openoffice.Setup/Product"><prop oor:name="ooSetupLastVersion" oor:op="fuse">\
<value>7.4</value></prop></item>
<item oor:path="/org.openoffice.Setup/Office"><prop oor:name="FirstRun" oor:op="fuse"><value>false</value></prop>\
</item>
<item oor:path="/org.openoffice.Office.Common/Misc"><prop oor:name="ShowTipOfTheDay" oor:op="fuse">\
<value>false</value></prop></item>
<item oor:path="/org.openoffice.Office.Common/Misc"><prop oor:name="FirstRun" oor:op="fuse">\
<value>false</value></prop></item>
<item oor:path="/org.openoffice.Office.Common/Save/Document"><prop oor:name="WarnAlienFormat" oor:op="fuse">\
<value>false</value></prop></item>
<item oor:path="/org.openoffice.Office.Recovery/RecoveryInfo"><prop oor:name="Enabled" oor:op="fuse">\
<value>false</value></prop></item>
</oor:items>
"""
#: Files every episode's home starts with (path under /home/user -> text): apps past their first-start prompts,
#: the VM's usual folders.
HOME_SEED: Mapping[str, str] = MappingProxyType({
    ".config/libreoffice/4/user/registrymodifications.xcu": _LIBREOFFICE_SETTINGS,
    "Desktop/.keep": "", "Documents/.keep": "", "Downloads/.keep": "", "Pictures/.keep": "", "Music/.keep": "",
    "Videos/.keep": "",
})


def free_port() -> int:
    """A TCP port free on the loopback now (Chromium's DevTools port for one episode)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class OSWorldSession:
    """An OSWorld task set up on a live desktop; `close()` removes every trace of it."""

    def __init__(self, task_json: Mapping[str, Any], desktop: Desktop, display: str, *, unsafe_host: bool = False,
                 parent: Path | None = None, downloads: Path | None = None, offline: bool = False) -> None:
        self.task_json = task_json
        self.root: Root = (UnsafeHost if unsafe_host else IsolatedRoot)(display, parent=parent)
        try:
            for relative, text in HOME_SEED.items():
                target = self.root.host_path(f"/home/user/{relative}")
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(text)
            cache = Path(tempfile.mkdtemp(prefix="cache-", dir=getattr(self.root, "dir", None)))
            self.context = TaskContext(root=self.root, desktop=desktop, task_cache=cache,
                                       downloads=downloads or default_downloads(), cdp_port=free_port(),
                                       offline=offline, task=task_json)
        except BaseException:
            self.root.close()
            raise

    def start(self) -> None:
        """Run the task's config steps in order (`StepError` names the failing one)."""
        run_steps(self.context, self.task_json.get("config", []), "config")

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.task_json.get("id"), "isolated": self.root.isolated,
                "home": str(self.root.host_path("/home/user")), "cdp_port": self.context.cdp_port}

    def close(self) -> None:
        self.root.close()
