// Launcher: the phone's home screen (a start page on the web) opening the other sandbox apps; app.data.opened
// records every app launched from here, in order.
"use strict";
(function () {
  const DEFAULTS = { opened: [] };
  const RECENT_LIMIT = 4;
  // name, label, description, tile colour, icon (SVG path data drawn in white on the tile)
  const APPS = [
    ["mail", "Mail", "Inbox, drafts and sent mail", "#0969da", '<rect x="3" y="5.5" width="18" height="13" rx="2" fill="none" stroke="#fff" stroke-width="2"/><path d="M3.5 7l8.5 6.5L20.5 7" fill="none" stroke="#fff" stroke-width="2" stroke-linejoin="round"/>'],
    ["calendar", "Calendar", "Events and reminders", "#cf222e", '<rect x="3.5" y="5" width="17" height="15" rx="2" fill="none" stroke="#fff" stroke-width="2"/><path d="M3.5 10h17M8 3v4M16 3v4" stroke="#fff" stroke-width="2" stroke-linecap="round"/><rect x="7" y="13" width="3" height="3" fill="#fff"/>'],
    ["contacts", "Contacts", "People and phone numbers", "#1a7f37", '<circle cx="12" cy="9" r="3.5" fill="#fff"/><path d="M5.5 19c0-3.6 2.9-6 6.5-6s6.5 2.4 6.5 6z" fill="#fff"/>'],
    ["notes", "Notes", "Lists, ideas and reminders", "#bf8700", '<path d="M6 3.5h8.5l4 4V20.5H6z" fill="none" stroke="#fff" stroke-width="2" stroke-linejoin="round"/><path d="M9 11.5h6.5M9 15h6.5" stroke="#fff" stroke-width="2" stroke-linecap="round"/>'],
    ["shop", "Shop", "Browse and order products", "#bc4c00", '<path d="M4 8h16l-1.5 12h-13z" fill="none" stroke="#fff" stroke-width="2" stroke-linejoin="round"/><path d="M9 10V6.5a3 3 0 0 1 6 0V10" fill="none" stroke="#fff" stroke-width="2" stroke-linecap="round"/>'],
    ["files", "Files", "Documents and downloads", "#0550ae", '<path d="M3.5 6.5a1.5 1.5 0 0 1 1.5-1.5h4.5l2 2.5H19a1.5 1.5 0 0 1 1.5 1.5V18a1.5 1.5 0 0 1-1.5 1.5H5A1.5 1.5 0 0 1 3.5 18z" fill="none" stroke="#fff" stroke-width="2" stroke-linejoin="round"/>'],
    ["settings", "Settings", "Wi-Fi, display, language", "#57606a", '<circle cx="12" cy="12" r="3.2" fill="none" stroke="#fff" stroke-width="2"/><path d="M12 3v3M12 18v3M3 12h3M18 12h3M5.6 5.6l2.1 2.1M16.3 16.3l2.1 2.1M5.6 18.4l2.1-2.1M16.3 7.7l2.1-2.1" stroke="#fff" stroke-width="2" stroke-linecap="round"/>'],
  ];
  const { $, ready, h, clearable, confirmDialog } = widgets;
  let app = null;
  let query = "";
  const info = (name) => APPS.find((a) => a[0] === name);
  const href = (name) => "../" + name + "/index.html?layout=" + encodeURIComponent(app.layout);
  const matches = ([name, label]) => !query || label.toLowerCase().includes(query.toLowerCase().trim());

  function icon(color, svg) {
    const span = h("span", { class: "icon", html: '<svg viewBox="0 0 24 24">' + svg + "</svg>" }); // fixed markup from APPS, never user data
    span.style.background = color;
    return span;
  }

  function link(name, testid, cls, withDescription) {
    const [, label, description, color, svg] = info(name);
    return h("a", { class: cls, href: href(name), "data-testid": testid, "data-app": name, onclick: (e) => { e.preventDefault(); open(name); } },
      icon(color, svg),
      h("span", { class: "app-text" },
        h("span", { class: "app-label" }, label),
        withDescription ? h("span", { class: "app-desc" }, description) : null));
  }

  function open(name) {
    app.data.opened.push(name);
    app.save();
    location.href = href(name);
  }

  function recents() {
    const seen = [];
    for (const name of app.data.opened.slice().reverse()) {
      if (info(name) && !seen.includes(name)) seen.push(name);
    }
    return seen.slice(0, RECENT_LIMIT);
  }

  function render(a) {
    app = a;
    const grid = $("#grid");
    grid.textContent = "";
    const shown = APPS.filter(matches);
    shown.forEach(([name]) => grid.appendChild(link(name, "app-" + name, "app-tile", true)));
    $("#empty").classList.toggle("hidden", shown.length > 0);
    const list = $("#recent-list");
    list.textContent = "";
    const recent = recents();
    recent.forEach((name) => list.appendChild(link(name, "recent-app", "recent-item", false)));
    $("#no-recents").classList.toggle("hidden", recent.length > 0);
    $("#clear-recents").classList.toggle("hidden", recent.length === 0);
  }

  function build() {
    const search = $("#app-search");
    search.addEventListener("input", () => { query = search.value; render(app); });
    search.addEventListener("keydown", (e) => {
      const first = APPS.find(matches);
      if (e.key === "Enter" && query.trim() && first) open(first[0]);
    });
    clearable(search);
    const ask = confirmDialog({
      title: "Clear recent apps?", text: "The list of recently used apps will be erased.", ok: "Clear",
      onOk: () => { app.data.opened = []; app.save(); },
    });
    $("#clear-recents").addEventListener("click", () => ask());
  }

  ready(build);
  app = uivenusApp("launcher", DEFAULTS, render);
})();
