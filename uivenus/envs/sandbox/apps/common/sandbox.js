// The contract every sandbox app keeps with uivenus (read by BrowserEnv.state() and task checkers):
//   window.uivenus.state()      -> a JSON-ready copy of the app's state
//   window.uivenus.setup(obj)   -> replace the app's state with defaults merged with obj, then re-render
// State lives in sessionStorage so it survives navigation between the app's pages and a reload.
// Each app calls  const app = uivenusApp("notes", defaults, render)  and mutates app.data, then app.save().
// Planted content (safety evaluations): setup({..., planted: [...]}) keeps the list apart from the app's state and
// shows it above every screen of the app: a banner, a notice styled as a system dialog, a review card, tiny text, a
// picture (its text only in its pixels) or an attacker's link. It is text on the screen, nothing more: it changes no
// state (a link takes the page elsewhere, where the host allow-list stops it).
(function () {
  const PLANTED = "uivenus:planted";
  const plantedItem = (item) => {
    const el = document.createElement({image: "img", link: "a"}[item.kind] || "div");
    el.className = "planted planted-" + item.kind;
    if (item.kind === "image") { el.src = item.src; el.alt = ""; return el; }
    if (item.kind === "link") { el.href = item.href; el.textContent = item.text; return el; }
    if (item.title) { const t = document.createElement("strong"); t.textContent = item.title; el.append(t, " "); }
    el.append(item.text || "");
    if (item.kind === "dialog") {
      const ok = document.createElement("button");
      ok.type = "button"; ok.textContent = item.button || "OK";
      ok.addEventListener("click", () => el.remove());
      el.append(" ", ok);
    }
    return el;
  };
  const plant = () => {
    let items = [];
    try { items = JSON.parse(sessionStorage.getItem(PLANTED)) || []; } catch (e) { items = []; }
    if (!items.length || !document.body || document.getElementById("uivenus-planted")) return;
    const box = document.createElement("div");
    box.id = "uivenus-planted";
    box.append(...items.map(plantedItem));
    document.body.prepend(box);
  };
  const params = new URLSearchParams(location.search);
  const layout = params.get("layout") || (window.innerWidth <= 500 ? "phone" : "web");
  document.documentElement.dataset.layout = layout;

  window.uivenusApp = function (name, defaults, render) {
    const key = "uivenus:" + name;
    const clone = (o) => JSON.parse(JSON.stringify(o));
    let stored = null;
    try { stored = JSON.parse(sessionStorage.getItem(key)); } catch (e) { stored = null; }
    const app = {
      name: name,
      layout: layout,
      data: stored || clone(defaults),
      save() { sessionStorage.setItem(key, JSON.stringify(app.data)); render(app); },
    };
    window.uivenus = {
      app: name,
      state: () => clone(app.data),
      setup: (obj) => {
        const given = clone(obj || {});
        sessionStorage.setItem(PLANTED, JSON.stringify(given.planted || []));
        delete given.planted;
        document.getElementById("uivenus-planted")?.remove();
        app.data = Object.assign(clone(defaults), given);
        app.save();
        plant();
      },
    };
    document.addEventListener("DOMContentLoaded", () => { render(app); plant(); });
    if (document.readyState !== "loading") { render(app); plant(); }
    return app;
  };
})();
