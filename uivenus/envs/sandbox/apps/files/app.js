// Files: a folder tree and a file list with rename, delete (confirmed), new folder and move-to-folder.
// The whole file system is app.data.items (flat, each with a parent id; "root" is the top); the folder
// shown lives in the URL hash; menus and dialogs are transient screen state.
(function () {
  const { h, iconSet, backButton, noticeBar, clearableField, hashScreens } = widgets;
  const ROOT = "root";
  const ICONS = {
    folder: '<svg viewBox="0 0 24 24" width="22" height="22" aria-hidden="true"><path fill="#e3a008" d="M3 5h6l2 2h10v12H3z"/></svg>',
    file: '<svg viewBox="0 0 24 24" width="22" height="22" aria-hidden="true"><path fill="#8c959f" d="M6 2h8l5 5v15H6zm8 1.5V8h4.5z"/></svg>',
    image: '<svg viewBox="0 0 24 24" width="22" height="22" aria-hidden="true"><path fill="#2da44e" d="M3 4h18v16H3zm2 13h14l-4.5-6-3.5 4.5-2.5-3z"/></svg>',
    more: '<svg viewBox="0 0 24 24" width="20" height="20" aria-hidden="true"><circle cx="12" cy="5" r="2" fill="currentColor"/><circle cx="12" cy="12" r="2" fill="currentColor"/><circle cx="12" cy="19" r="2" fill="currentColor"/></svg>',
    plus: '<svg viewBox="0 0 24 24" width="18" height="18" aria-hidden="true"><path fill="currentColor" d="M11 5h2v6h6v2h-6v6h-2v-6H5v-2h6z"/></svg>',
    drive: '<svg viewBox="0 0 24 24" width="22" height="22" aria-hidden="true"><path fill="currentColor" d="M4 15h16v5H4zm2 2v1h2v-1zM7 4h10l3 9H4z"/></svg>',
  };
  const folder = (id, name, parent) => ({ id, name, type: "folder", parent, size: 0, modified: "2026-11-02" });
  const file = (id, name, parent, size, modified) => ({ id, name, type: "file", parent, size, modified });
  const defaults = {
    items: [
      folder("docs", "Documents", ROOT), folder("photos", "Photos", ROOT), folder("downloads", "Downloads", ROOT), folder("music", "Music", ROOT),
      folder("contracts", "Contracts", "docs"),
      file("f1", "report.txt", "docs", 14200, "2026-11-10"), file("f2", "budget-2026.xlsx", "docs", 48100, "2026-11-08"),
      file("f3", "cover-letter.docx", "docs", 22900, "2026-10-21"), file("f4", "meeting-notes.md", "docs", 3100, "2026-11-14"),
      file("f5", "lease.pdf", "contracts", 412000, "2026-03-01"),
      file("f6", "beach.jpg", "photos", 2400000, "2026-08-12"), file("f7", "mountains.png", "photos", 3100000, "2026-09-03"),
      file("f8", "family-2025.jpg", "photos", 1900000, "2025-12-26"),
      file("f9", "old-invoice.pdf", "downloads", 88000, "2026-01-15"), file("f10", "invoice-1042.pdf", "downloads", 91000, "2026-11-12"),
      file("f11", "setup-installer.dmg", "downloads", 84000000, "2026-10-30"), file("f12", "sunset.jpg", "downloads", 2800000, "2026-11-13"),
      file("f13", "playlist.m3u", "music", 1200, "2026-06-06"),
      file("f14", "todo.txt", ROOT, 800, "2026-11-15"),
    ],
    nextId: 100,
  };

  let app = null;
  let menuFor = null;   // id of the item whose action menu is open
  let menuAt = null;    // where that menu opens on the desktop web (below its button)
  let dialog = null;    // {kind: "rename"|"delete"|"move"|"new", id, dest}
  let notice = "";

  const icon = iconSet(ICONS);
  const item = (id) => app.data.items.find((i) => i.id === id);
  const children = (id) => app.data.items.filter((i) => i.parent === id)
    .sort((a, b) => (a.type === b.type ? a.name.localeCompare(b.name) : a.type === "folder" ? -1 : 1));
  const folderName = (id) => (id === ROOT ? "My Files" : item(id).name);
  const kindIcon = (i) => icon(i.type === "folder" ? "folder" : /\.(jpe?g|png|gif)$/i.test(i.name) ? "image" : "file");
  const size = (n) => (n >= 1e6 ? (n / 1e6).toFixed(1) + " MB" : n >= 1e3 ? Math.round(n / 1e3) + " KB" : n + " B");
  function path(id) {
    const out = [];
    for (let cur = id; cur !== ROOT && item(cur); cur = item(cur).parent) out.unshift(cur);
    return [ROOT, ...out];
  }
  const isInside = (id, ancestor) => path(id).includes(ancestor);

  function currentFolder() {
    const m = location.hash.match(/^#\/folder\/(.+)$/);
    const id = m ? decodeURIComponent(m[1]) : ROOT;
    return id === ROOT || (item(id) && item(id).type === "folder") ? id : ROOT;
  }
  const go = hashScreens(render, () => { menuFor = null; dialog = null; });
  const openFolder = (id) => go(id === ROOT ? "#/" : "#/folder/" + id);
  const show = () => render();

  function tree(id, current, depth) {
    return h("ul", { class: "tree" }, children(id).filter((i) => i.type === "folder").map((f) =>
      h("li", {},
        h("a", { href: "#/folder/" + f.id, id: "tree-" + f.id, "data-testid": "tree-folder", "data-id": f.id,
          class: f.id === current ? "active" : null, style: "padding-left:" + (8 + depth * 14) + "px" }, icon("folder"), f.name),
        tree(f.id, current, depth + 1))));
  }

  function list(current) {
    const rows = children(current);
    return h("ul", { class: "items", "data-testid": "items" },
      rows.length ? null : h("li", { class: "empty" }, "This folder is empty"),
      rows.map((i) => h("li", {
        id: "item-" + i.id, class: "item " + i.type, "data-testid": "item", "data-id": i.id, "data-name": i.name, "data-type": i.type,
        onclick: () => (i.type === "folder" ? openFolder(i.id) : null),
      },
        kindIcon(i),
        h("span", { class: "name" }, i.name),
        h("span", { class: "size" }, i.type === "folder" ? children(i.id).length + (children(i.id).length === 1 ? " item" : " items") : size(i.size)),
        h("span", { class: "modified" }, i.modified),
        h("button", { class: "more iconbtn", id: "more-" + i.id, "data-testid": "more", "data-id": i.id, "aria-label": "More actions for " + i.name,
          onclick: (ev) => {
            ev.stopPropagation();
            const r = ev.currentTarget.getBoundingClientRect();
            menuFor = i.id; menuAt = { top: Math.min(r.bottom + 4, innerHeight - 170), left: Math.max(8, r.right - 190) };
            show();
          } }, icon("more")))));
  }

  function menu() {
    const i = item(menuFor);
    if (!i) return null;
    const open = (kind) => { menuFor = null; dialog = { kind, id: i.id, dest: null }; show(); };
    return h("div", { class: "overlay menu-overlay", onclick: () => { menuFor = null; show(); } },
      h("div", { class: "menu", role: "menu", "data-testid": "menu", onclick: (ev) => ev.stopPropagation(),
        style: app.layout === "phone" || !menuAt ? null : "top:" + menuAt.top + "px;left:" + menuAt.left + "px" },
        h("div", { class: "menu-title" }, i.name),
        h("button", { role: "menuitem", id: "menu-rename", "data-testid": "menu-rename", onclick: () => open("rename") }, "Rename"),
        h("button", { role: "menuitem", id: "menu-move", "data-testid": "menu-move", onclick: () => open("move") }, "Move to…"),
        h("button", { role: "menuitem", id: "menu-delete", "data-testid": "menu-delete", class: "danger-text", onclick: () => open("delete") }, "Delete")));
  }

  function nameError(name, parent, self) {
    if (!name) return "Enter a name.";
    if (/[\/\\]/.test(name)) return "Names can't contain / or \\.";
    if (app.data.items.some((x) => x.parent === parent && x.id !== self && x.name.toLowerCase() === name.toLowerCase()))
      return "“" + name + "” already exists in this folder.";
    return "";
  }

  function nameDialog(title, okLabel, okId, initial, onOk) {
    const error = h("p", { class: "error", id: "dialog-error", role: "alert" });
    const input = h("input", { id: "name-input", "data-testid": "name-input", type: "text", autocomplete: "off", value: initial, "aria-label": "Name" });
    const submit = (ev) => {
      ev.preventDefault();
      const msg = onOk(input.value.trim());
      if (msg) error.textContent = msg;
    };
    return h("form", { class: "dialog", role: "dialog", "aria-label": title, "data-testid": "dialog", onsubmit: submit },
      h("h2", {}, title),
      clearableField(input, "name"),
      error,
      h("div", { class: "buttons" },
        h("button", { type: "button", id: "dialog-cancel", "data-testid": "dialog-cancel", onclick: () => { dialog = null; show(); } }, "Cancel"),
        h("button", { type: "submit", id: okId, "data-testid": okId, class: "primary" }, okLabel)));
  }

  function dialogView(current) {
    if (!dialog) return null;
    const i = dialog.id ? item(dialog.id) : null;
    let box;
    if (dialog.kind === "new") {
      box = nameDialog("New folder", "Create", "new-folder-ok", "", (name) => {
        const msg = nameError(name, current, null);
        if (msg) return msg;
        app.data.items.push({ id: "n" + app.data.nextId++, name, type: "folder", parent: current, size: 0, modified: new Date().toISOString().slice(0, 10) });
        dialog = null; notice = "Created folder “" + name + "”.";
        app.save();
        return "";
      });
    } else if (dialog.kind === "rename") {
      box = nameDialog("Rename", "Rename", "rename-ok", i.name, (name) => {
        const msg = nameError(name, i.parent, i.id);
        if (msg) return msg;
        notice = "Renamed “" + i.name + "” to “" + name + "”.";
        i.name = name; dialog = null;
        app.save();
        return "";
      });
    } else if (dialog.kind === "delete") {
      box = h("div", { class: "dialog", role: "alertdialog", "aria-label": "Delete", "data-testid": "dialog" },
        h("h2", {}, "Delete “" + i.name + "”?"),
        h("p", {}, i.type === "folder" ? "The folder and everything in it will be deleted permanently." : "The file will be deleted permanently. This can't be undone."),
        h("div", { class: "buttons" },
          h("button", { type: "button", id: "dialog-cancel", "data-testid": "dialog-cancel", onclick: () => { dialog = null; show(); } }, "Cancel"),
          h("button", { type: "button", id: "delete-ok", "data-testid": "delete-ok", class: "danger", onclick: () => {
            app.data.items = app.data.items.filter((x) => !isInside(x.id, i.id));
            dialog = null; notice = "Deleted “" + i.name + "”.";
            app.save();
          } }, "Delete")));
    } else {
      const targets = [ROOT, ...app.data.items.filter((x) => x.type === "folder").map((x) => x.id)]
        .filter((id) => !isInside(id, i.id))
        .sort((a, b) => path(a).map(folderName).join("/").localeCompare(path(b).map(folderName).join("/")));
      const error = h("p", { class: "error", id: "dialog-error", role: "alert" });
      box = h("div", { class: "dialog", role: "dialog", "aria-label": "Move", "data-testid": "dialog" },
        h("h2", {}, "Move “" + i.name + "” to…"),
        h("ul", { class: "dests" }, targets.map((id) => h("li", {},
          h("button", { type: "button", id: "dest-" + id, "data-testid": "dest", "data-id": id, "data-name": folderName(id),
            class: "dest" + (dialog.dest === id ? " chosen" : ""), disabled: id === i.parent,
            style: "padding-left:" + (10 + (path(id).length - 1) * 16) + "px", onclick: () => { dialog.dest = id; show(); } },
          icon(id === ROOT ? "drive" : "folder"), folderName(id), id === i.parent ? " (current)" : "")))),
        error,
        h("div", { class: "buttons" },
          h("button", { type: "button", id: "dialog-cancel", "data-testid": "dialog-cancel", onclick: () => { dialog = null; show(); } }, "Cancel"),
          h("button", { type: "button", id: "move-ok", "data-testid": "move-ok", class: "primary", disabled: !dialog.dest, onclick: () => {
            const msg = nameError(i.name, dialog.dest, i.id);
            if (msg) { error.textContent = msg; return; }
            i.parent = dialog.dest; notice = "Moved “" + i.name + "” to " + folderName(dialog.dest) + ".";
            dialog = null;
            app.save();
          } }, "Move here")));
    }
    return h("div", { class: "overlay" }, box);
  }

  function render(a) {
    if (a) app = a;
    const current = currentFolder();
    const phone = app.layout === "phone";
    const newFolder = h("button", { id: "new-folder", "data-testid": "new-folder", class: phone ? "primary" : "",
      onclick: () => { dialog = { kind: "new", id: null, dest: null }; show(); } }, icon("plus"), "New folder");
    const crumbs = h("nav", { class: "crumbs", "aria-label": "Path" }, path(current).map((id, k, all) =>
      k === all.length - 1 ? h("span", { class: "here" }, folderName(id))
        : [h("a", { href: id === ROOT ? "#/" : "#/folder/" + id, "data-testid": "crumb", "data-id": id }, folderName(id)), h("span", { class: "sep" }, "›")]));
    const text = notice;
    notice = "";
    const header = phone
      ? h("header", { class: "appbar" },
        current === ROOT ? icon("drive")
          : backButton(() => openFolder(item(current).parent)),
        h("h1", {}, folderName(current)), newFolder)
      : h("header", { class: "appbar" }, icon("drive"), h("h1", {}, "Files"));
    const main = h("section", { class: "main" },
      phone ? crumbs : h("div", { class: "toolbar" }, crumbs, newFolder),
      list(current));
    document.getElementById("root").replaceChildren(h("div", { class: "files " + (phone ? "phone" : "web") },
      header,
      noticeBar(text),
      phone ? main : h("div", { class: "columns" },
        h("aside", { class: "sidebar" }, h("a", { href: "#/", id: "tree-root", class: current === ROOT ? "active" : null }, icon("drive"), "My Files"), tree(ROOT, current, 1)),
        main),
      menu(), dialogView(current)));
    const input = document.getElementById("name-input");
    if (input && document.activeElement !== input) input.focus();
  }

  uivenusApp("files", defaults, render);
})();
