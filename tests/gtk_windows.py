"""Small real GTK 3 windows for desktop tests, as a command line: the system Python (where PyGObject is) runs the
source given on it, since a task root hides the host's /tmp, where a checkout may lie."""

from __future__ import annotations

#: {body} fills `box`, a vertical box in a window titled {title}; the window shows at ({x}, {y}).
_WINDOW = """
import base64, zlib, gi
gi.require_version("Gtk", "3.0")
from gi.repository import GdkPixbuf, GLib, Gtk
window = Gtk.Window(title={title!r})
window.connect("destroy", Gtk.main_quit)
box = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, spacing=6)
window.add(box)
{body}
window.move({x}, {y})
window.show_all()
Gtk.main()
"""


def gtk_window(title: str, body: str, at: tuple[int, int] = (50, 50)) -> list[str]:
    """The command line of a GTK window whose widgets `body` (Python source) adds to `box`."""
    return ["python3", "-c", _WINDOW.format(title=title, body=body.strip("\n"), x=at[0], y=at[1])]


#: A window with a filled entry and a button: what an accessibility listing should name.
INVOICE = gtk_window("Invoice", """
entry = Gtk.Entry()
entry.set_text("ACME Ltd")
box.add(entry)
box.add(Gtk.Button(label="Send invoice"))
""")
