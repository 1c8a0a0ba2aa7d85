"""A tiny Tk app that logs every input it receives as JSON lines, so desktop tests can check effects.

Run: python event_logger.py LOG_PATH [--title TITLE] [--press-delay S]. F2 renames the window; with --press-delay the
app is busy that long before it shows a press (a loaded machine, a slow app). Layout (client-area pixels, fixed):
a press pad at (20, 20, 300x200) that counts presses on screen, a canvas at (340, 20, 300x200) holding
a draggable square, and an Entry at (20, 250, 400x30). Widget positions in root pixels are logged
as a "layout" event whenever the window is mapped or moved, so tests never guess where the WM put it.
"""

from __future__ import annotations

import argparse
import json
import time
import tkinter as tk

PAD = (20, 20, 300, 200)
CANVAS = (340, 20, 300, 200)
ENTRY = (20, 250, 400, 30)
SQUARE = (40, 40, 80, 80)  # canvas coordinates x1, y1, x2, y2


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("log")
    parser.add_argument("--title", default="Event Logger")
    parser.add_argument("--press-delay", type=float, default=0.0)
    args = parser.parse_args()
    log_file = open(args.log, "a", encoding="utf-8")  # noqa: SIM115 - lives as long as the app

    def log(event: str, **fields: object) -> None:
        log_file.write(json.dumps({"event": event, **fields}, ensure_ascii=False) + "\n")
        log_file.flush()

    root = tk.Tk(className="EventLogger")
    root.title(args.title)
    root.geometry("660x300")

    pad = tk.Label(root, text="presses: 0", bg="#dde6f0", font=("TkDefaultFont", 24))
    pad.place(x=PAD[0], y=PAD[1], width=PAD[2], height=PAD[3])
    canvas = tk.Canvas(root, bg="white", highlightthickness=0)
    canvas.place(x=CANVAS[0], y=CANVAS[1], width=CANVAS[2], height=CANVAS[3])
    square = canvas.create_rectangle(*SQUARE, fill="#c03030", outline="")
    text = tk.StringVar(root)
    entry = tk.Entry(root, textvariable=text, font=("TkDefaultFont", 14))
    entry.place(x=ENTRY[0], y=ENTRY[1], width=ENTRY[2], height=ENTRY[3])
    presses = 0

    def box(widget: tk.Widget) -> list[int]:
        return [widget.winfo_rootx(), widget.winfo_rooty(), widget.winfo_width(), widget.winfo_height()]

    def layout(_event: object = None) -> None:
        root.update_idletasks()
        log("layout", pad=box(pad), canvas=box(canvas), entry=box(entry), square=canvas.coords(square))

    def press(event: tk.Event, kind: str) -> None:
        nonlocal presses
        time.sleep(args.press_delay)
        presses += 1
        pad.configure(text=f"presses: {presses}")
        log(kind, button=event.num, x=event.x_root, y=event.y_root, state=event.state)

    pad.bind("<ButtonPress>", lambda e: press(e, "press"))
    pad.bind("<Double-ButtonPress-1>", lambda e: press(e, "double"))
    pad.bind("<Triple-ButtonPress-1>", lambda e: press(e, "triple"))
    pad.bind("<ButtonRelease>", lambda e: log("release", button=e.num, x=e.x_root, y=e.y_root))
    pad.bind("<Motion>", lambda e: log("motion", x=e.x_root, y=e.y_root, state=e.state))

    grab: dict[str, float] = {}

    def drag_start(event: tk.Event) -> None:
        grab.update(x=event.x, y=event.y, x0=event.x, y0=event.y)

    def drag_move(event: tk.Event) -> None:
        canvas.move(square, event.x - grab["x"], event.y - grab["y"])
        grab.update(x=event.x, y=event.y)

    def drag_end(event: tk.Event) -> None:
        log("drop", start=[grab["x0"], grab["y0"]], end=[event.x, event.y], square=canvas.coords(square))

    canvas.tag_bind(square, "<ButtonPress-1>", drag_start)
    canvas.tag_bind(square, "<B1-Motion>", drag_move)
    canvas.tag_bind(square, "<ButtonRelease-1>", drag_end)

    root.bind_all("<KeyPress>", lambda e: log("key", keysym=e.keysym, char=e.char, state=e.state))
    root.bind_all("<KeyPress-F2>", lambda e: root.title(f"{args.title} (renamed)"), add="+")
    root.bind_all("<KeyRelease>", lambda e: log("keyup", keysym=e.keysym, state=e.state))
    text.trace_add("write", lambda *_: log("text", value=text.get()))
    root.bind("<Map>", layout)
    root.bind("<Configure>", lambda e: layout() if e.widget is root else None)
    entry.focus_set()
    root.mainloop()


if __name__ == "__main__":
    main()
