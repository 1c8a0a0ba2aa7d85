"""AT-SPI reads on request, for the env's element records: a script the system Python runs inside a task's root.

pyatspi lives in Debian's system Python, not in our venv, and importing it and joining the bus costs more than a
read, so one process stays up for the root's lifetime and answers one JSON command a line on stdin with one JSON
line on stdout: `{"op": "elements"}` (every shown element, flat, with its child-index path, and the apps that did
not answer in time) or
`{"op": "hit", "x": X, "y": Y}` (the deepest element at a screen point). Only shown subtrees are walked and each
node's children are capped, so a spreadsheet's million cells cost no more than the ones on screen.
"""

from __future__ import annotations

MAX_NODES = 4000
MAX_CHILDREN = 150  # a document's paragraphs, a list's items: the first ones are enough to know the screen
MAX_CELLS = 30  # a spreadsheet's cells on screen: a few tell what the sheet shows
MAX_TEXT = 200
#: Roles whose text or number is read (asking every label and panel for text would double the walk's D-Bus calls).
TEXT_ROLES = {"text", "entry", "password text", "paragraph", "document text", "terminal", "combo box", "label",
              "heading", "table cell", "spin button", "editbar"}
VALUE_ROLES = {"spin button", "slider", "progress bar", "scroll bar", "level bar"}
#: Roles that only hold others: their actions are never asked for (a third of a LibreOffice window's elements).
STRUCTURAL = {"panel", "filler", "separator", "label", "tool bar", "scroll pane", "split pane", "viewport",
              "menu bar", "root pane", "layered pane", "frame", "paragraph", "status bar", "application"}
CALL_TIMEOUT_MS = 3000  # one D-Bus call to a hung app gives up after this (pyatspi's default is 25 s)


def serve() -> None:
    import json
    import sys

    import pyatspi

    pyatspi.setTimeout(CALL_TIMEOUT_MS, CALL_TIMEOUT_MS)

    def record(accessible, path, app, states):  # noqa: ANN001, ANN202 - pyatspi objects are untyped
        role = accessible.getRoleName() or "unknown"
        # an unnamed control (LibreOffice's toolbar buttons) is known by its description, as its tooltip shows it
        name = accessible.name or ("showing" in states and accessible.description) or ""
        out = {"role": role, "name": name, "states": states, "path": path, "app": app}
        try:
            x, y, w, h = accessible.queryComponent().getExtents(pyatspi.DESKTOP_COORDS)
            out["bounds"] = [x, y, w, h]
        except Exception:  # noqa: BLE001 - an app may refuse any single query; the rest still counts
            pass
        try:
            if role in TEXT_ROLES:
                text = accessible.queryText()
                out["value"] = text.getText(0, min(text.characterCount, MAX_TEXT))
        except Exception:  # noqa: BLE001
            pass
        try:
            if role in VALUE_ROLES:
                value = accessible.queryValue()
                out["value"] = str(value.currentValue)
                out["value_range"] = [value.minimumValue, value.maximumValue]
        except Exception:  # noqa: BLE001
            pass
        try:
            if role not in STRUCTURAL:
                actions = accessible.queryAction()
                out["actions"] = [actions.getName(i) for i in range(actions.nActions)]
        except Exception:  # noqa: BLE001
            pass
        return out

    def elements() -> dict:
        found: list = []
        hung: set = set()  # apps a call timed out on: the rest of their tree is not asked for
        stack = []
        for i, app in enumerate(pyatspi.Registry.getDesktop(0)):
            if app is not None:
                stack.append((app, [i], app.name or ""))
        while stack and len(found) < MAX_NODES:
            accessible, path, app = stack.pop()
            if app in hung:
                continue
            try:
                states = [pyatspi.stateToString(s) for s in accessible.getState().getStates()]
                if len(path) > 1 and "showing" not in states:
                    continue  # hidden (a closed menu's items): one call, nothing kept, nothing below walked
                item = record(accessible, path, app, states)
                cap = MAX_CELLS if item["role"] in ("table", "tree table") else MAX_CHILDREN
                count = min(accessible.childCount, cap)
                children = [(accessible.getChildAtIndex(k), k) for k in range(count)]
            except Exception as exc:  # noqa: BLE001 - the object went away while we walked, or its app hangs
                if len(path) == 1 or "Timeout" in str(exc) or "NoReply" in str(exc):
                    hung.add(app or f"app {path[0]}")  # listed on the bus (so alive) but not answering
                continue
            found.append(item)
            stack.extend((child, [*path, k], app) for child, k in reversed(children) if child is not None)
        return {"elements": found, "hung": sorted(hung)}

    def hit(x: int, y: int):  # noqa: ANN202
        best = None
        for i, app in enumerate(pyatspi.Registry.getDesktop(0)):
            for k, window in enumerate(app or ()):
                try:
                    if window is None or not window.getState().contains(pyatspi.STATE_SHOWING):
                        continue
                    component = window.queryComponent()
                    if not component.contains(x, y, pyatspi.DESKTOP_COORDS):
                        continue
                except Exception:  # noqa: BLE001
                    continue
                node, path = window, [i, k]
                while True:
                    try:
                        inner = node.queryComponent().getAccessibleAtPoint(x, y, pyatspi.DESKTOP_COORDS)
                    except Exception:  # noqa: BLE001
                        inner = None
                    if inner is None or inner == node:
                        break
                    node, path = inner, [*path, inner.getIndexInParent()]
                found = record(node, path, app.name or "",
                               [pyatspi.stateToString(s) for s in node.getState().getStates()])
                if best is None or window.getState().contains(pyatspi.STATE_ACTIVE):
                    best = found
        return best

    for line in sys.stdin:
        try:
            command = json.loads(line)
            if command["op"] == "elements":
                answer = elements()
            elif command["op"] == "hit":
                answer = {"element": hit(int(command["x"]), int(command["y"]))}
            else:
                answer = {"error": f"unknown op {command['op']!r}"}
        except Exception as exc:  # noqa: BLE001 - answer every line; the reader decides what a failure means
            answer = {"error": f"{type(exc).__name__}: {exc}"}
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    serve()
