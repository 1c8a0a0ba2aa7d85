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
  let app = null;
  const $ = (sel) => document.querySelector(sel);

  // The screen lives in the URL hash ("", "contact/<id>", "edit/<id>", "new"), so PressBack walks back.
  const hashRoute = () => location.hash.replace(/^#/, "");
  let route = hashRoute();
  let loaded = null; // the route whose contact the form was filled from
  let touched = {};
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
    if (!(history.state && history.state.inApp)) return go(route.startsWith("edit/") ? "contact/" + route.slice(5) : "", true);
    route = route.startsWith("edit/") ? "contact/" + route.slice(5) : "";
    history.back();
    window.scrollTo(0, 0);
    render(app);
  }

  const find = (id) => app.data.contacts.find((c) => c.id === id);
  const routeId = () => route.replace(/^(contact|edit)\//, "");
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
    const el = document.createElement("span");
    el.className = "avatar" + (cls ? " " + cls : "");
    el.style.background = color(c.name);
    el.textContent = initials(c.name);
    return el;
  }

  function rowFor(c, testid) {
    const row = document.createElement("button");
    row.className = "contact-row" + (routeId() === c.id && route ? " active" : "");
    row.dataset.testid = testid;
    row.dataset.id = c.id;
    row.dataset.name = c.name;
    const text = document.createElement("span");
    text.className = "row-text";
    const name = document.createElement("span");
    name.className = "row-name";
    name.textContent = c.name;
    const phone = document.createElement("span");
    phone.className = "row-phone";
    phone.textContent = c.phone;
    text.append(name, phone);
    row.append(avatar(c), text);
    if (c.favorite) {
      const star = document.createElement("span");
      star.className = "row-star";
      star.textContent = "★";
      row.appendChild(star);
    }
    row.addEventListener("click", () => go("contact/" + c.id));
    return row;
  }

  function render(a) {
    app = a;
    const contacts = a.data.contacts;
    if ((route.startsWith("contact/") || route.startsWith("edit/")) && !find(routeId())) route = "";
    const screen = route.startsWith("contact/") ? "detail" : route === "new" || route.startsWith("edit/") ? "form" : "list";
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
        const h = document.createElement("h3");
        h.className = "group";
        h.textContent = letter;
        list.appendChild(h);
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
    if (screen === "form" && loaded !== route) load();
    if (screen !== "form") loaded = null;
    updateForm();
  }

  function load() {
    const c = route.startsWith("edit/") ? find(routeId()) : null;
    $("#contact-name").value = c ? c.name : "";
    $("#contact-phone").value = c ? c.phone : "";
    $("#contact-email").value = c ? c.email : "";
    $("#form-title").textContent = c ? "Edit contact" : "New contact";
    touched = {};
    loaded = route;
  }

  function updateForm() {
    const errors = validate();
    for (const key of ["name", "phone", "email"]) {
      $("#" + key + "-error").textContent = touched[key] ? errors[key] : "";
      document.querySelector("[data-testid=contact-" + key + "-clear]").classList.toggle("hidden", !$("#contact-" + key).value);
    }
    $("#save-contact").disabled = Object.values(errors).some(Boolean);
    $("[data-testid=search-clear]").classList.toggle("hidden", !$("#search").value);
  }

  function save(event) {
    event.preventDefault();
    if (Object.values(validate()).some(Boolean)) return;
    const fields = {
      name: $("#contact-name").value.trim().replace(/\s+/g, " "),
      phone: $("#contact-phone").value.trim(),
      email: $("#contact-email").value.trim(),
    };
    if (route.startsWith("edit/")) {
      Object.assign(find(routeId()), fields);
      app.save();
      back();
    } else {
      const next = 1 + Math.max(0, ...app.data.contacts.map((c) => Number(c.id.replace(/\D/g, "")) || 0));
      const contact = { id: "c" + next, ...fields, favorite: false };
      app.data.contacts.push(contact);
      app.save();
      go("contact/" + contact.id, true);
    }
  }

  function remove() {
    $("#confirm").classList.add("hidden");
    const c = find(routeId());
    if (!c) return;
    app.data.contacts = app.data.contacts.filter((x) => x.id !== c.id);
    app.save();
    back();
  }

  function build() {
    $("#add-contact").addEventListener("click", () => go("new"));
    $("[data-testid=back]").addEventListener("click", back);
    $("#cancel-edit").addEventListener("click", back);
    $("#edit-contact").addEventListener("click", () => go("edit/" + routeId()));
    $("#favorite-toggle").addEventListener("click", () => { const c = find(routeId()); c.favorite = !c.favorite; app.save(); });
    $("#delete-contact").addEventListener("click", () => {
      $("#confirm-text").textContent = find(routeId()).name + " will be removed from your contacts.";
      $("#confirm").classList.remove("hidden");
    });
    $("#confirm-cancel").addEventListener("click", () => $("#confirm").classList.add("hidden"));
    $("#confirm-ok").addEventListener("click", remove);
    $("#form").addEventListener("submit", save);
    $("#search").addEventListener("input", () => { query = $("#search").value; render(app); });
    for (const key of ["name", "phone", "email"]) {
      $("#contact-" + key).addEventListener("input", () => { touched[key] = true; updateForm(); });
    }
    for (const id of ["contact-name", "contact-phone", "contact-email", "search"]) {
      const input = $("#" + id);
      document.querySelector("[data-testid=" + id + "-clear]").addEventListener("click", () => {
        input.value = "";
        input.focus();
        input.dispatchEvent(new Event("input"));
      });
    }
    window.addEventListener("popstate", () => { route = hashRoute(); window.scrollTo(0, 0); render(app); });
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", build);
  else build();
  app = uivenusApp("contacts", DEFAULTS, render);
})();
