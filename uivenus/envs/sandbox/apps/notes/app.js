// Notes: a searchable list of notes with an editor (create, edit, pin, delete); the notes live in app.data.
"use strict";
(function () {
  const DEFAULTS = {
    notes: [
      { id: "n1", title: "Groceries", body: "Milk, eggs, spinach, coffee beans, rye bread", pinned: false },
      { id: "n2", title: "Book club", body: "Next meeting: The Remains of the Day. Bring snacks.", pinned: false },
      { id: "n3", title: "Wi-Fi password", body: "Guest network HomeNet-Guest, password sunflower42", pinned: true },
      { id: "n4", title: "Dentist", body: "Dr. Okafor, Tuesday 14 May at 10:30", pinned: false },
    ],
  };
  const { $, ready, h, clearable, syncClearButtons, confirmDialog, hashRoutes } = widgets;
  let app = null;

  // The screen lives in the URL hash ("", "note/<id>", "new"), so PressBack leaves the editor.
  const nav = hashRoutes(() => render(app));
  const back = () => nav.back("");
  let loaded = null; // the route whose note the editor fields were filled from
  let draftPinned = false;
  let query = "";
  const current = () => (nav.route.startsWith("note/") ? app.data.notes.find((n) => n.id === nav.route.slice(5)) : null);
  const ordered = (notes) => notes.filter((n) => n.pinned).concat(notes.filter((n) => !n.pinned));
  const matches = (n) => !query || (n.title + "\n" + n.body).toLowerCase().includes(query.toLowerCase());

  function render(a) {
    app = a;
    const notes = a.data.notes;
    if (nav.route.startsWith("note/") && !current()) nav.route = "";
    const editing = nav.route === "new" || nav.route.startsWith("note/");
    document.body.dataset.screen = editing ? "editor" : "list";
    $("#count").textContent = notes.length + (notes.length === 1 ? " note" : " notes");

    const shown = ordered(notes).filter(matches);
    $("#list").replaceChildren(...shown.map((n) => h("button", {
      class: "note-row" + (nav.route === "note/" + n.id ? " active" : ""), "data-testid": "note-row", "data-id": n.id,
      "data-title": n.title, onclick: () => nav.go("note/" + n.id),
    },
    h("span", { class: "note-title" }, n.title || "Untitled"),
    h("span", { class: "note-preview" }, n.body),
    n.pinned ? h("span", { class: "pin-badge" }, "Pinned") : null)));
    $("#empty").classList.toggle("hidden", shown.length > 0 || !query);

    $("#placeholder").classList.toggle("hidden", editing);
    $("#editor-body").classList.toggle("hidden", !editing);
    if (editing && loaded !== nav.route) load();
    if (!editing) loaded = null;
    const note = current();
    const pinned = note ? note.pinned : draftPinned;
    $("#pin-note").setAttribute("aria-pressed", String(pinned));
    $("#pin-note .label").textContent = pinned ? "Unpin" : "Pin";
    $("#delete-note").classList.toggle("hidden", !note);
    $("#editor-title").textContent = note ? "Edit note" : "New note";
    updateForm();
  }

  function load() {
    const note = current();
    $("#note-title").value = note ? note.title : "";
    $("#note-body").value = note ? note.body : "";
    draftPinned = false;
    $("#status").textContent = "";
    loaded = nav.route;
  }

  function updateForm() {
    const title = $("#note-title").value, body = $("#note-body").value;
    $("#save-note").disabled = !title.trim() && !body.trim();
    syncClearButtons();
  }

  function save() {
    const title = $("#note-title").value.trim(), body = $("#note-body").value.trim();
    let note = current();
    if (!note) {
      const next = 1 + Math.max(0, ...app.data.notes.map((n) => Number(n.id.replace(/\D/g, "")) || 0));
      note = { id: "n" + next, title: "", body: "", pinned: draftPinned };
      app.data.notes.unshift(note);
    }
    note.title = title;
    note.body = body;
    if (app.layout === "phone") {
      app.save();
      back();
    } else {
      loaded = "note/" + note.id;
      nav.go("note/" + note.id, true);
      app.save();
      $("#status").textContent = "Saved";
    }
  }

  function togglePin() {
    const note = current();
    if (note) { note.pinned = !note.pinned; app.save(); }
    else { draftPinned = !draftPinned; render(app); }
  }

  function remove() {
    const note = current();
    if (!note) return;
    app.data.notes = app.data.notes.filter((n) => n.id !== note.id);
    app.save();
    if (app.layout === "phone") back(); else nav.go("", true);
  }

  function build() {
    $("#new-note").addEventListener("click", () => nav.go("new"));
    $("[data-testid=back]").addEventListener("click", back);
    $("#save-note").addEventListener("click", save);
    $("#pin-note").addEventListener("click", togglePin);
    const ask = confirmDialog({ title: "Delete note?", ok: "Delete", onOk: remove });
    $("#delete-note").addEventListener("click", () => ask("“" + (current().title || "Untitled") + "” will be deleted permanently."));
    $("#search").addEventListener("input", () => { query = $("#search").value; render(app); });
    for (const field of ["note-title", "note-body", "search"]) {
      const input = $("#" + field);
      if (field !== "search") input.addEventListener("input", () => { $("#status").textContent = ""; updateForm(); });
      clearable(input);
    }
  }

  ready(build);
  app = uivenusApp("notes", DEFAULTS, render);
})();
