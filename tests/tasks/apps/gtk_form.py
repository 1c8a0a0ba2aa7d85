"""A small real GTK 3 app for the explorer's tests (run by the system Python, which has PyGObject).

It has what real apps have — a check box, a combo box, entries (one a font box), a spin button, a button that writes a
file in the home, a dialog — and what goes wrong in them: a dialog that never closes, a button that hangs the app, one
that crashes it.
"""

import os
import time

import gi

gi.require_version("Gtk", "3.0")
from gi.repository import Gtk  # noqa: E402


def save(_button):
    with open(os.path.expanduser("~/saved.txt"), "w") as out:
        out.write(entry.get_text() + "\n")


def stuck(_button):
    dialog = Gtk.Dialog(title="Stuck", transient_for=window, modal=True)
    dialog.get_content_area().add(Gtk.Label(label="This dialog never closes"))
    dialog.connect("delete-event", lambda *a: True)
    dialog.connect("response", lambda *a: dialog.stop_emission_by_name("response"))
    dialog.connect("close", lambda *a: dialog.stop_emission_by_name("close"))
    dialog.show_all()


Gtk.Settings.get_default().set_property("gtk-cursor-blink", False)  # a still screen settles each step at once
window = Gtk.Window(title="Form")
window.connect("destroy", Gtk.main_quit)
box = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, spacing=6)
window.add(box)
box.add(Gtk.CheckButton(label="Bold"))
combo = Gtk.ComboBoxText()
for colour in ("Red", "Green", "Blue"):
    combo.append_text(colour)
combo.set_active(0)
box.add(combo)
entry = Gtk.Entry()
box.add(entry)
font = Gtk.Entry()  # named only for assistive technology, like a toolbar's font box
font.get_accessible().set_name("Font name")
box.add(font)
copies = Gtk.SpinButton.new_with_range(1, 20, 1)  # its range is what AT-SPI's Value interface reports
copies.get_accessible().set_name("Copies")
box.add(copies)
for label, handler in (("Save", save), ("Settings", stuck), ("Hang", lambda b: time.sleep(60)),
                       ("Crash", lambda b: os._exit(3))):
    button = Gtk.Button(label=label)
    button.connect("clicked", handler)
    box.add(button)
window.set_default_size(300, 300)
window.show_all()
Gtk.main()
