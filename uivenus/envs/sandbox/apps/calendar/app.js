// Calendar: a month grid with the selected day's agenda, and a form to create, edit and delete events.
// Events live in app.data; the day or event shown lives in the URL hash (#/day/2026-11-18, #/event/e2).
(function () {
  const { h, iconSet, backButton, noticeBar, clearableField, hashScreens } = widgets;
  const ICONS = {
    cal: '<svg viewBox="0 0 24 24" width="22" height="22" aria-hidden="true"><path fill="currentColor" d="M7 2h2v2h6V2h2v2h3v17H4V4h3zm-1 7v10h12V9zm2 2h3v3H8z"/></svg>',
    plus: '<svg viewBox="0 0 24 24" width="18" height="18" aria-hidden="true"><path fill="currentColor" d="M11 5h2v6h6v2h-6v6h-2v-6H5v-2h6z"/></svg>',
    pin: '<svg viewBox="0 0 24 24" width="14" height="14" aria-hidden="true"><path fill="currentColor" d="M12 2a7 7 0 0 1 7 7c0 5-7 13-7 13S5 14 5 9a7 7 0 0 1 7-7zm0 4.5a2.5 2.5 0 1 0 0 5 2.5 2.5 0 0 0 0-5z"/></svg>',
  };
  const ev = (id, title, date, time, location) => ({ id, title, date, time, location });
  const defaults = {
    today: "2026-11-16",
    events: [
      ev("e1", "Team standup", "2026-11-16", "09:00", "Room 4B"),
      ev("e2", "Yoga class", "2026-11-18", "18:30", "Lotus Studio"),
      ev("e3", "Lunch with Priya", "2026-11-19", "12:30", "Ramen Ya"),
      ev("e4", "Car service", "2026-11-24", "08:00", "AutoFix Garage"),
      ev("e5", "Project review", "2026-11-26", "14:00", ""),
      ev("e6", "Mom's birthday dinner", "2026-11-28", "19:00", "Casa Lima"),
      ev("e7", "Piano recital", "2026-12-12", "17:00", "City Hall"),
      ev("e8", "Flight to Berlin", "2026-12-20", "07:15", "Lisbon Airport"),
    ],
    nextId: 100,
  };
  const WEEKDAYS = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];

  let app = null;
  let notice = "";
  let confirming = false;  // the delete confirmation of the event being edited is open

  const icon = iconSet(ICONS);
  const pad = (n) => String(n).padStart(2, "0");
  const iso = (y, m, d) => y + "-" + pad(m) + "-" + pad(d);
  const parse = (s) => { const [y, m, d] = s.split("-").map(Number); return { y, m, d }; };
  const utc = (s) => { const { y, m, d } = parse(s); return new Date(Date.UTC(y, m - 1, d)); };
  const daysIn = (y, m) => new Date(Date.UTC(y, m, 0)).getUTCDate();
  const validDate = (s) => /^\d{4}-\d{2}-\d{2}$/.test(s) && (() => { const { y, m, d } = parse(s); return m >= 1 && m <= 12 && d >= 1 && d <= daysIn(y, m); })();
  const validTime = (s) => /^([01]\d|2[0-3]):[0-5]\d$/.test(s);
  const fmt = (s, opts) => utc(s).toLocaleDateString("en-US", { timeZone: "UTC", ...opts });
  const eventsOn = (date) => app.data.events.filter((e) => e.date === date).sort((a, b) => a.time.localeCompare(b.time));
  const find = (id) => app.data.events.find((e) => e.id === id);

  function route() {
    const [screen, arg] = location.hash.replace(/^#\/?/, "").split("/");
    if (screen === "event" && find(arg)) return { screen: "edit", event: find(arg), day: find(arg).date };
    if (screen === "new") return { screen: "new", day: validDate(arg || "") ? arg : app.data.today };
    if (screen === "month" && /^\d{4}-\d{2}$/.test(arg || "")) return { screen: "day", day: arg + "-01" };
    return { screen: "day", day: validDate(arg || "") ? arg : app.data.today };
  }
  const go = hashScreens(render, () => { confirming = false; });

  function month(selected) {
    const { y, m } = parse(selected);
    const first = (utc(iso(y, m, 1)).getUTCDay() + 6) % 7;  // Monday-first column of the 1st
    const shift = (k) => { const t = new Date(Date.UTC(y, m - 1 + k, 1)); return "#/month/" + t.getUTCFullYear() + "-" + pad(t.getUTCMonth() + 1); };
    const cells = [];
    for (let i = 0; i < first; i++) cells.push(h("div", { class: "cell blank" }));
    for (let d = 1; d <= daysIn(y, m); d++) {
      const date = iso(y, m, d);
      const evs = eventsOn(date);
      cells.push(h("button", {
        id: "day-" + date, "data-testid": "day", "data-date": date, type: "button",
        class: "cell day" + (date === selected ? " selected" : "") + (date === app.data.today ? " today" : ""),
        "aria-label": fmt(date, { weekday: "long", month: "long", day: "numeric" }) + (evs.length ? ", " + evs.length + " events" : ""),
        onclick: () => go("#/day/" + date),
      },
        h("span", { class: "num" }, d),
        app.layout === "phone"
          ? h("span", { class: "dots" }, evs.slice(0, 3).map(() => h("i", {})))
          : evs.slice(0, 3).map((e) => h("span", { class: "chip", id: "chip-" + e.id, "data-testid": "chip", "data-id": e.id,
            onclick: (x) => { x.stopPropagation(); go("#/event/" + e.id); } }, e.time + " " + e.title))));
    }
    return h("section", { class: "month", "data-testid": "month" },
      h("div", { class: "month-nav" },
        h("a", { href: shift(-1), id: "prev-month", "data-testid": "prev-month", class: "navbtn", "aria-label": "Previous month" }, "‹"),
        h("h2", { id: "month-title" }, fmt(iso(y, m, 1), { month: "long", year: "numeric" })),
        h("a", { href: shift(1), id: "next-month", "data-testid": "next-month", class: "navbtn", "aria-label": "Next month" }, "›"),
        h("a", { href: "#/day/" + app.data.today, id: "today", class: "btn today-btn" }, "Today")),
      h("div", { class: "grid" }, WEEKDAYS.map((w) => h("div", { class: "wd" }, w)), cells));
  }

  function agenda(day) {
    const evs = eventsOn(day);
    return h("section", { class: "agenda", "data-testid": "agenda", "data-date": day },
      h("div", { class: "agenda-head" },
        h("h2", { id: "agenda-title" }, fmt(day, { weekday: "long", month: "long", day: "numeric", year: "numeric" })),
        h("button", { id: "new-event", "data-testid": "new-event", class: "primary", onclick: () => go("#/new/" + day) }, icon("plus"), "New event")),
      evs.length ? h("ul", { class: "events" }, evs.map((e) =>
        h("li", { id: "event-" + e.id, class: "event", "data-testid": "event", "data-id": e.id, "data-title": e.title, tabindex: 0,
          onclick: () => go("#/event/" + e.id) },
          h("span", { class: "time" }, e.time),
          h("span", { class: "what" }, h("span", { class: "title" }, e.title),
            e.location ? h("span", { class: "where" }, icon("pin"), e.location) : null))))
        : h("p", { class: "empty" }, "No events."));
  }

  function form(r) {
    const e = r.screen === "edit" ? r.event : null;
    const error = h("p", { id: "ev-error", class: "error", role: "alert" });
    const field = (id, label, value, attrs) => {
      const input = h("input", { id, name: id, "data-testid": id, type: "text", autocomplete: "off", value, ...attrs });
      return [h("label", { for: id }, label), clearableField(input, label.toLowerCase())];
    };
    function save(x) {
      x.preventDefault();
      const f = x.target.elements;
      const data = { title: f["ev-title"].value.trim(), date: f["ev-date"].value.trim(), time: f["ev-time"].value.trim(), location: f["ev-location"].value.trim() };
      if (!data.title) { error.textContent = "Give the event a title."; return; }
      if (!validDate(data.date)) { error.textContent = "Enter the date as YYYY-MM-DD."; return; }
      if (!validTime(data.time)) { error.textContent = "Enter the time as HH:MM (24-hour)."; return; }
      if (e) Object.assign(e, data);
      else app.data.events.push({ id: "e" + app.data.nextId++, ...data });
      notice = e ? "Event updated." : "Event created.";
      app.save();
      go("#/day/" + data.date);
    }
    const del = () => {
      app.data.events = app.data.events.filter((x) => x.id !== e.id);
      notice = "Event deleted.";
      app.save();
      go("#/day/" + e.date);
    };
    return h("form", { class: "event-form", "data-testid": "event-form", onsubmit: save, novalidate: true },
      h("h2", {}, e ? "Edit event" : "New event"),
      field("ev-title", "Title", e ? e.title : "", { placeholder: "Add title" }),
      h("div", { class: "pair" },
        h("div", {}, field("ev-date", "Date", e ? e.date : r.day, { placeholder: "YYYY-MM-DD", inputmode: "numeric" })),
        h("div", {}, field("ev-time", "Time", e ? e.time : "", { placeholder: "HH:MM", inputmode: "numeric" }))),
      field("ev-location", "Location (optional)", e ? e.location : "", { placeholder: "Add location" }),
      error,
      h("div", { class: "buttons" },
        h("button", { type: "submit", id: "ev-save", "data-testid": "ev-save", class: "primary" }, "Save"),
        h("button", { type: "button", id: "ev-cancel", "data-testid": "ev-cancel", onclick: () => go("#/day/" + (e ? e.date : r.day)) }, "Cancel"),
        e ? h("button", { type: "button", id: "ev-delete", "data-testid": "ev-delete", class: "danger-outline", onclick: () => { confirming = true; render(); } }, "Delete") : null),
      e && confirming ? h("div", { class: "overlay" }, h("div", { class: "dialog", role: "alertdialog", "data-testid": "confirm-delete" },
        h("h2", {}, "Delete “" + e.title + "”?"),
        h("p", {}, fmt(e.date, { weekday: "long", month: "long", day: "numeric" }) + " at " + e.time + ". This can't be undone."),
        h("div", { class: "buttons" },
          h("button", { type: "button", id: "delete-cancel", "data-testid": "delete-cancel", onclick: () => { confirming = false; render(); } }, "Cancel"),
          h("button", { type: "button", id: "delete-ok", "data-testid": "delete-ok", class: "danger", onclick: del }, "Delete")))) : null);
  }

  function render(a) {
    if (a) app = a;
    const r = route();
    const phone = app.layout === "phone";
    const editing = r.screen !== "day";
    const text = notice;
    notice = "";
    const header = h("header", { class: "appbar" },
      phone && editing ? backButton(() => go("#/day/" + r.day)) : icon("cal"),
      h("h1", {}, phone && editing ? (r.screen === "edit" ? "Edit event" : "New event") : "Calendar"));
    const body = phone
      ? (editing ? form(r) : [month(r.day), agenda(r.day)])
      : h("div", { class: "columns" }, month(r.day), h("aside", { class: "side" }, editing ? form(r) : agenda(r.day)));
    document.getElementById("root").replaceChildren(h("div", { class: "calendar " + (phone ? "phone" : "web") },
      header,
      noticeBar(text),
      h("main", {}, body)));
  }

  uivenusApp("calendar", defaults, render);
})();
