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
  let app = null;
  const $ = (sel) => document.querySelector(sel);

  // The screen lives in the URL hash ("", "note/<id>", "new"), so PressBack leaves the editor.
  const hashRoute = () => location.hash.replace(/^#/, "");
  let route = hashRoute();
  let loaded = null; // the route whose note the editor fields were filled from
  let draftPinned = false;
  let query = "";

  function go(r, replace) {
    route = r;
    const url = r ? "#" + r : location.pathname + location.search;
    if (replace) history.replaceState(history.state, "", url);
    else history.pushState({ inApp: true }, "", url);
    window.scrollTo(0, 0);
    render(app);
  }
  function back() {
    if (!(history.state && history.state.inApp)) return go("", true);
    route = "";
    history.back();
    window.scrollTo(0, 0);
    render(app);
  }
  const current = () => (route.startsWith("note/") ? app.data.notes.find((n) => n.id === route.slice(5)) : null);
  const ordered = (notes) => notes.filter((n) => n.pinned).concat(notes.filter((n) => !n.pinned));
  const matches = (n) => !query || (n.title + "\n" + n.body).toLowerCase().includes(query.toLowerCase());

  function render(a) {
    app = a;
    const notes = a.data.notes;
    if (route.startsWith("note/") && !current()) route = "";
    const editing = route === "new" || route.startsWith("note/");
    document.body.dataset.screen = editing ? "editor" : "list";
    $("#count").textContent = notes.length + (notes.length === 1 ? " note" : " notes");

    const list = $("#list");
    list.textContent = "";
    const shown = ordered(notes).filter(matches);
    for (const n of shown) {
      const row = document.createElement("button");
      row.className = "note-row" + (route === "note/" + n.id ? " active" : "");
      row.dataset.testid = "note-row";
      row.dataset.id = n.id;
      row.dataset.title = n.title;
      const title = document.createElement("span");
      title.className = "note-title";
      title.textContent = n.title || "Untitled";
      const preview = document.createElement("span");
      preview.className = "note-preview";
      preview.textContent = n.body;
      row.append(title, preview);
      if (n.pinned) {
        const pin = document.createElement("span");
        pin.className = "pin-badge";
        pin.textContent = "Pinned";
        row.appendChild(pin);
      }
      row.addEventListener("click", () => go("note/" + n.id));
      list.appendChild(row);
    }
    $("#empty").classList.toggle("hidden", shown.length > 0 || !query);

    $("#placeholder").classList.toggle("hidden", editing);
    $("#editor-body").classList.toggle("hidden", !editing);
    if (editing && loaded !== route) load();
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
    loaded = route;
  }

  function updateForm() {
    const title = $("#note-title").value, body = $("#note-body").value;
    $("#save-note").disabled = !title.trim() && !body.trim();
    for (const field of ["note-title", "note-body", "search"]) {
      document.querySelector("[data-testid=" + field + "-clear]").classList.toggle("hidden", !$("#" + field).value);
    }
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
      go("note/" + note.id, true);
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
    $("#confirm").classList.add("hidden");
    if (!note) return;
    app.data.notes = app.data.notes.filter((n) => n.id !== note.id);
    app.save();
    if (app.layout === "phone") back(); else go("", true);
  }

  function build() {
    $("#new-note").addEventListener("click", () => go("new"));
    $("[data-testid=back]").addEventListener("click", back);
    $("#save-note").addEventListener("click", save);
    $("#pin-note").addEventListener("click", togglePin);
    $("#delete-note").addEventListener("click", () => {
      $("#confirm-text").textContent = "“" + (current().title || "Untitled") + "” will be deleted permanently.";
      $("#confirm").classList.remove("hidden");
    });
    $("#confirm-cancel").addEventListener("click", () => $("#confirm").classList.add("hidden"));
    $("#confirm-ok").addEventListener("click", remove);
    $("#search").addEventListener("input", () => { query = $("#search").value; render(app); });
    for (const field of ["note-title", "note-body", "search"]) {
      const input = $("#" + field);
      if (field !== "search") input.addEventListener("input", () => { $("#status").textContent = ""; updateForm(); });
      document.querySelector("[data-testid=" + field + "-clear]").addEventListener("click", (e) => {
        e.preventDefault();
        input.value = "";
        input.focus();
        input.dispatchEvent(new Event("input"));
      });
    }
    window.addEventListener("popstate", () => { route = hashRoute(); window.scrollTo(0, 0); render(app); });
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", build);
  else build();
  app = uivenusApp("notes", DEFAULTS, render);
})();
