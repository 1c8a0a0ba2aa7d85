"""The desktop's accessibility tree as OSWorld's XML, read over AT-SPI inside a task's sandbox.

This file is also a script: the `accessibility_tree` getter runs its source with the system Python (Debian's
`python3-pyatspi` lives there, not in our venv) inside the task's root, on the root's own session bus, and reads
the XML from its output. The XML follows the public benchmark's serialisation: one element per accessible, its
role as the tag (spaces as dashes), `name`, and namespaced attributes for states (`st:`), object attributes
(`attr:`), on-screen position and size (`cp:`), text (`txt:`), value (`val:`) and actions (`act:`).
"""

from __future__ import annotations

NAMESPACE_BASE = "https://accessibility.ubuntu.example.org/ns/"
PREFIXES = {"st": "state", "attr": "attributes", "cp": "component", "doc": "document",
            "docattr": "document/attributes", "txt": "text", "val": "value", "act": "action"}
MAX_NODES = 20000
MAX_DEPTH = 60


def dump() -> str:
    """Walk every application on the bus and serialise the tree (runs where pyatspi is importable)."""
    import xml.etree.ElementTree as ET

    import pyatspi

    for prefix, path in PREFIXES.items():
        ET.register_namespace(prefix, NAMESPACE_BASE + path)
    seen = [0]

    def qualified(prefix: str, name: str) -> str:
        return "{%s%s}%s" % (NAMESPACE_BASE, PREFIXES[prefix], name.replace(" ", "-"))

    def node(accessible, depth: int):  # noqa: ANN001, ANN202 - pyatspi objects are untyped
        seen[0] += 1
        element = ET.Element((accessible.getRoleName() or "unknown").replace(" ", "-"))
        element.set("name", accessible.name or "")
        for state in accessible.getState().getStates():
            element.set(qualified("st", pyatspi.stateToString(state)), "true")
        try:
            attributes = dict(a.split(":", 1) for a in accessible.getAttributes() if ":" in a)
        except Exception:  # noqa: BLE001 - an app may refuse any single query; the rest of the tree still counts
            attributes = {}
        for key, value in attributes.items():
            element.set(qualified("attr", key), value)
        try:
            component = accessible.queryComponent()
            x, y = component.getPosition(pyatspi.XY_SCREEN)
            width, height = component.getSize()
            element.set(qualified("cp", "screencoord"), f"({x}, {y})")
            element.set(qualified("cp", "size"), f"({width}, {height})")
        except Exception:  # noqa: BLE001
            pass
        try:
            text = accessible.queryText().getText(0, -1)
            element.text = text
        except Exception:  # noqa: BLE001
            pass
        try:
            element.set(qualified("val", "value"), str(accessible.queryValue().currentValue))
        except Exception:  # noqa: BLE001
            pass
        try:
            actions = accessible.queryAction()
            for i in range(actions.nActions):
                element.set(qualified("act", actions.getName(i)), actions.getKeyBinding(i) or "")
        except Exception:  # noqa: BLE001
            pass
        if depth < MAX_DEPTH:
            for child in children(accessible):
                if seen[0] < MAX_NODES:
                    try:
                        element.append(node(child, depth + 1))
                    except Exception:  # noqa: BLE001 - it went away while being read (a closing dialog): skip it
                        continue
        return element

    def children(accessible):  # noqa: ANN001, ANN202
        try:
            return [child for child in accessible if child is not None]
        except Exception:  # noqa: BLE001 - the parent went away while being read
            return []

    desktop = ET.Element("desktop-frame", {"name": ""})
    for app in children(pyatspi.Registry.getDesktop(0)):
        try:
            desktop.append(node(app, 1))
        except Exception:  # noqa: BLE001 - an app that quit while being read
            continue
    return ET.tostring(desktop, encoding="unicode")


if __name__ == "__main__":
    print(dump())
