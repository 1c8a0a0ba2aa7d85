"""The desktop's accessibility tree as OSWorld's XML, read over AT-SPI inside a task's sandbox.

This file is also a script: the `accessibility_tree` getter runs its source with the system Python (Debian's
`python3-pyatspi` lives there, not in our venv) inside the task's root, on the root's own session bus, and reads
the XML from its output. The XML follows the public benchmark's serialisation: one element per accessible, its
role as the tag (spaces as dashes), `name`, and namespaced attributes for states (`st:`), object attributes
(`attr:`), on-screen position and size (`cp:`), text (`txt:`), value (`val:`) and actions (`act:NAME_desc`,
`act:NAME_kb`).

The walk is bounded as the benchmark's own reader bounds it, so a spreadsheet reads in seconds: at most `MAX_DEPTH`
levels and `MAX_WIDTH` children a node, and a table inside a `document spreadsheet` (LibreOffice Calc exposes every
one of its 2^20 x 16384 cells) yields only its cells on screen, row by row from the one at the grid's top-left corner
(else the first shown one within `CALC_SEARCH` cells of A1 along row 1 or column A; else none).
"""

from __future__ import annotations

NAMESPACE_BASE = "https://accessibility.ubuntu.example.org/ns/"
PREFIXES = {"st": "state", "attr": "attributes", "cp": "component", "doc": "document",
            "docattr": "document/attributes", "txt": "text", "val": "value", "act": "action"}
MAX_DEPTH = 50
MAX_WIDTH = 1024
CALC_SEARCH = 500


def dump() -> str:
    """Walk every application on the bus and serialise the tree (runs where pyatspi is importable)."""
    import re
    import xml.etree.ElementTree as ET

    import pyatspi

    for prefix, path in PREFIXES.items():
        ET.register_namespace(prefix, NAMESPACE_BASE + path)

    def qualified(prefix: str, name: str) -> str:
        """A namespaced XML name; an app's own names (attributes, actions) may hold what XML forbids."""
        local = re.sub(r"[^A-Za-z0-9_.-]", "-", name)
        return "{%s%s}%s" % (NAMESPACE_BASE, PREFIXES[prefix], local if re.match(r"[A-Za-z_]", local) else "_" + local)

    def node(accessible, depth: int, in_sheet: bool = False):  # noqa: ANN001, ANN202 - pyatspi objects are untyped
        role = accessible.getRoleName() or "unknown"
        element = ET.Element(role.replace(" ", "-"))
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
            for i in range(actions.nActions):  # as the benchmark names them: NAME_desc, NAME_kb
                element.set(qualified("act", actions.getName(i) + "_desc"), actions.getDescription(i) or "")
                element.set(qualified("act", actions.getName(i) + "_kb"), actions.getKeyBinding(i) or "")
        except Exception:  # noqa: BLE001
            pass
        in_sheet = in_sheet or role == "document spreadsheet"
        if depth < MAX_DEPTH:
            kids = shown_cells(accessible) if in_sheet and role == "table" else children(accessible)
            for child in kids:
                try:
                    element.append(node(child, depth + 1, in_sheet))
                except Exception:  # noqa: BLE001 - it went away while being read (a closing dialog): skip it
                    continue
        return element

    def showing(accessible) -> bool:  # noqa: ANN001
        return accessible.getState().contains(pyatspi.STATE_SHOWING)

    def shown_cells(table):  # noqa: ANN001, ANN202
        """A sheet's cells on screen, row by row from the top-left shown one, each row's run of shown cells."""
        try:
            grid = table.queryTable()
            rows, columns = grid.nRows, grid.nColumns
            first = top_left(table, columns)
        except Exception:  # noqa: BLE001 - no table interface or no extents: nothing to bound by, read none
            return []
        if first is None:
            return []
        row, column = first
        cells = []
        while row < rows:
            run = []
            for c in range(column, min(columns, column + MAX_WIDTH)):
                cell = table.getChildAtIndex(row * columns + c)
                if cell is None or not showing(cell):
                    break
                run.append(cell)
            if not run:
                break
            cells.extend(run)
            row += 1
        return cells

    def top_left(table, columns: int):  # noqa: ANN001, ANN202
        """(row, column) of the first shown cell: the one at the grid's top-left corner, else the first shown one
        within `CALC_SEARCH` cells of A1 along row 1 or column A (a sheet scrolled further shows nothing we read)."""
        x, y, _, _ = table.queryComponent().getExtents(pyatspi.XY_SCREEN)
        corner = table.queryComponent().getAccessibleAtPoint(x + 1, y + 1, pyatspi.XY_SCREEN)
        if corner is not None and showing(corner):
            index = corner.getIndexInParent()
            return divmod(index, columns)
        for c in range(CALC_SEARCH):
            if showing(table.getChildAtIndex(c)):
                return 0, c
        for r in range(1, CALC_SEARCH):
            if showing(table.getChildAtIndex(r * columns)):
                return r, 0
        return None

    def children(accessible):  # noqa: ANN001, ANN202
        try:
            count = min(accessible.childCount, MAX_WIDTH)
            return [child for child in map(accessible.getChildAtIndex, range(count)) if child is not None]
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
