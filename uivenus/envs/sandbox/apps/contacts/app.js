// Contacts: a searchable address book with favourites, details and a validated add/edit form; contacts live in app.data.
"use strict";
(function () {
  const DEFAULTS = {
    contacts: [
      { id: "c1", name: "Ana Lima", phone: "555-0101", email: "ana.lima@example.com", favorite: true },
      { id: "c2", name: "Bruno Costa", phone: "555-0102", email: "bruno@example.com", favorite: false },
      { id: "c3", name: "Carla Mendes", phone: "555-0103", email: "", favorite: false },
      { id: "c4", name: "Diego Alves", phone: "555-0104", email: "diego.alves@example.org", favorite: false },
      { id: "c5", name: "Elena Petrova", phone: "+44 20 7946 0958", email: "elena@example.co.uk", favorite: true },
    ],
  };
  const COLORS = ["#1f6feb", "#8250df", "#bf3989", "#cf222e", "#bc4c00", "#1a7f37", "#0969da", "#6e7781"];
  const { $, ready, h, clearable, syncClearButtons, confirmDialog, hashRoutes } = widgets;
  let app = null;

  // The screen lives in the URL hash ("", "contact/<id>", "edit/<id>", "new"), so PressBack walks back.
  const nav = hashRoutes(() => render(app));
  const back = () => nav.back(nav.route.startsWith("edit/") ? "contact/" + nav.route.slice(5) : "");
  let loaded = null; // the route whose contact the form was filled from
  let touched = {};
  let query = "";

  const find = (id) => app.data.contacts.find((c) => c.id === id);
  const routeId = () => nav.route.replace(/^(contact|edit)\//, "");
  const initials = (name) => name.split(/\s+/).filter(Boolean).slice(0, 2).map((w) => w[0].toUpperCase()).join("");
  const color = (name) => COLORS[[...name].reduce((h, ch) => (h * 31 + ch.charCodeAt(0)) >>> 0, 7) % COLORS.length];
  const matches = (c) => !query || (c.name + " " + c.phone + " " + c.email).toLowerCase().includes(query.toLowerCase());
  const byName = (a, b) => a.name.localeCompare(b.name);

  function validate() {
    const name = $("#contact-name").value.trim();
    const phone = $("#contact-phone").value.trim();
    const email = $("#contact-email").value.trim();
    const digits = phone.replace(/\D/g, "").length;
    return {
      name: name ? "" : "Enter a name",
      phone: !phone ? "A phone number is required"
        : !/^\+?[0-9 ().-]+$/.test(phone) ? "Use digits, spaces, ( ) + - only"
        : digits < 7 || digits > 15 ? "A phone number has 7 to 15 digits" : "",
      email: !email || /^[^\s@]+@[^\s@]+\.[^\s@]{2,}$/.test(email) ? "" : "Enter a valid email address",
    };
  }

  function avatar(c, cls) {
    const el = h("span", { class: "avatar" + (cls ? " " + cls : "") }, initials(c.name));
    el.style.background = color(c.name);
    return el;
  }

  function rowFor(c, testid) {
    return h("button", {
      class: "contact-row" + (routeId() === c.id && nav.route ? " active" : ""), "data-testid": testid, "data-id": c.id,
      "data-name": c.name, onclick: () => nav.go("contact/" + c.id),
    },
    avatar(c),
    h("span", { class: "row-text" }, h("span", { class: "row-name" }, c.name), h("span", { class: "row-phone" }, c.phone)),
    c.favorite ? h("span", { class: "row-star" }, "★") : null);
  }

  function render(a) {
    app = a;
    const contacts = a.data.contacts;
    if ((nav.route.startsWith("contact/") || nav.route.startsWith("edit/")) && !find(routeId())) nav.route = "";
    const screen = nav.route.startsWith("contact/") ? "detail" : nav.route === "new" || nav.route.startsWith("edit/") ? "form" : "list";
    document.body.dataset.screen = screen;
    $("#count").textContent = contacts.length + (contacts.length === 1 ? " contact" : " contacts");

    const shown = contacts.filter(matches).sort(byName);
    const favorites = $("#favorites");
    favorites.textContent = "";
    shown.filter((c) => c.favorite).forEach((c) => favorites.appendChild(rowFor(c, "favorite-row")));
    $("#favorites-section").classList.toggle("hidden", !favorites.children.length || !!query);
    const list = $("#list");
    list.textContent = "";
    let letter = "";
    for (const c of shown) {
      const first = c.name[0].toUpperCase();
      if (first !== letter) {
        letter = first;
        list.appendChild(h("h3", { class: "group" }, letter));
      }
      list.appendChild(rowFor(c, "contact-row"));
    }
    $("#empty").classList.toggle("hidden", shown.length > 0);

    $("#placeholder").classList.toggle("hidden", screen !== "list");
    $("#detail").classList.toggle("hidden", screen !== "detail");
    $("#form").classList.toggle("hidden", screen !== "form");
    if (screen === "detail") {
      const c = find(routeId());
      const big = avatar(c, "big");
      $("#detail-avatar").replaceWith(big);
      big.id = "detail-avatar";
      $("#detail-name").textContent = c.name;
      $("#detail-phone").textContent = c.phone;
      $("#detail-email").textContent = c.email || "—";
      $("#favorite-toggle").setAttribute("aria-pressed", String(c.favorite));
      $("#favorite-toggle .label").textContent = c.favorite ? "Favorite ✓" : "Favorite";
    }
    if (screen === "form" && loaded !== nav.route) load();
    if (screen !== "form") loaded = null;
    updateForm();
  }

  function load() {
    const c = nav.route.startsWith("edit/") ? find(routeId()) : null;
    $("#contact-name").value = c ? c.name : "";
    $("#contact-phone").value = c ? c.phone : "";
    $("#contact-email").value = c ? c.email : "";
    $("#form-title").textContent = c ? "Edit contact" : "New contact";
    touched = {};
    loaded = nav.route;
  }

  function updateForm() {
    const errors = validate();
    for (const key of ["name", "phone", "email"]) $("#" + key + "-error").textContent = touched[key] ? errors[key] : "";
    $("#save-contact").disabled = Object.values(errors).some(Boolean);
    syncClearButtons();
  }

  function save(event) {
    event.preventDefault();
    if (Object.values(validate()).some(Boolean)) return;
    const fields = {
      name: $("#contact-name").value.trim().replace(/\s+/g, " "),
      phone: $("#contact-phone").value.trim(),
      email: $("#contact-email").value.trim(),
    };
    if (nav.route.startsWith("edit/")) {
      Object.assign(find(routeId()), fields);
      app.save();
      back();
    } else {
      const next = 1 + Math.max(0, ...app.data.contacts.map((c) => Number(c.id.replace(/\D/g, "")) || 0));
      const contact = { id: "c" + next, ...fields, favorite: false };
      app.data.contacts.push(contact);
      app.save();
      nav.go("contact/" + contact.id, true);
    }
  }

  function remove() {
    const c = find(routeId());
    if (!c) return;
    app.data.contacts = app.data.contacts.filter((x) => x.id !== c.id);
    app.save();
    back();
  }

  function build() {
    $("#add-contact").addEventListener("click", () => nav.go("new"));
    $("[data-testid=back]").addEventListener("click", back);
    $("#cancel-edit").addEventListener("click", back);
    $("#edit-contact").addEventListener("click", () => nav.go("edit/" + routeId()));
    $("#favorite-toggle").addEventListener("click", () => { const c = find(routeId()); c.favorite = !c.favorite; app.save(); });
    const ask = confirmDialog({ title: "Delete contact?", ok: "Delete", onOk: remove });
    $("#delete-contact").addEventListener("click", () => ask(find(routeId()).name + " will be removed from your contacts."));
    $("#form").addEventListener("submit", save);
    $("#search").addEventListener("input", () => { query = $("#search").value; render(app); });
    for (const key of ["name", "phone", "email"]) {
      $("#contact-" + key).addEventListener("input", () => { touched[key] = true; updateForm(); });
    }
    for (const id of ["contact-name", "contact-phone", "contact-email", "search"]) clearable($("#" + id));
  }

  ready(build);
  app = uivenusApp("contacts", DEFAULTS, render);
})();
