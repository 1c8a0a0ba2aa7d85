// The contract every sandbox app keeps with uivenus (read by BrowserEnv.state() and task checkers):
//   window.uivenus.state()      -> a JSON-ready copy of the app's state
//   window.uivenus.setup(obj)   -> replace the app's state with defaults merged with obj, then re-render
// State lives in sessionStorage so it survives navigation between the app's pages and a reload.
// Each app calls  const app = uivenusApp("notes", defaults, render)  and mutates app.data, then app.save().
(function () {
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
      setup: (obj) => { app.data = Object.assign(clone(defaults), clone(obj || {})); app.save(); },
    };
    document.addEventListener("DOMContentLoaded", () => render(app));
    if (document.readyState !== "loading") render(app);
    return app;
  };
})();
