// What the sandbox apps share, so each app.js holds only its own screens: the rest of every page's <head>, an element
// builder, text fields with a clear button, the confirm dialog, screens named in the URL hash and the phone Back
// button. The reference solvers (suites/*.py, solving.py) rely on the ids, data-testids and classes made here.
// Each app reads what it needs:  const { h, clearable, ... } = widgets;
"use strict";
(function () {
  // A page's <head> holds its charset, its title and this script; the rest is the same for every app. Writing it in
  // place while the head is parsed loads (and blocks the first render on) the stylesheets as if each page spelled
  // them out; sandbox.js runs after the viewport meta, as its layout guess needs.
  document.write('<meta name="viewport" content="width=device-width, initial-scale=1">' +
    '<link rel="stylesheet" href="../common/base.css"><link rel="stylesheet" href="app.css">' +
    '<script src="../common/sandbox.js"><\/script>');

  const $ = (sel) => document.querySelector(sel);
  const $$ = (sel) => Array.from(document.querySelectorAll(sel));

  /** Runs `fn` once the page's markup is parsed (app.js may run before or after that). */
  function ready(fn) {
    if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", fn);
    else fn();
  }

  /** h("a", {href, class, onclick, html, value}, ...children): an element; null/false props and children are left out. */
  function h(tag, props, ...kids) {
    const el = document.createElement(tag);
    for (const [k, v] of Object.entries(props || {})) {
      if (v == null || v === false) continue;
      if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
      else if (k === "html") el.innerHTML = v;
      else if (k === "value") el.value = v;
      else el.setAttribute(k, v === true ? "" : v);
    }
    for (const kid of kids.flat(Infinity)) if (kid != null && kid !== false) el.append(kid.nodeType ? kid : String(kid));
    return el;
  }

  /** icon(name) -> <span class="icon"> holding svgs[name] (fixed markup of the app, never user data). */
  const iconSet = (svgs) => (name) => h("span", { class: "icon", html: svgs[name] });

  const BACK_SVG = '<svg viewBox="0 0 24 24" width="22" height="22" aria-hidden="true"><path fill="currentColor" d="M20 11H7.8l5.6-5.6L12 4l-8 8 8 8 1.4-1.4L7.8 13H20z"/></svg>';
  /** The Back button of a phone app bar, in the apps that build their screens in code. */
  const backButton = (onclick) => h("button", { id: "back", "data-testid": "back", class: "iconbtn", "aria-label": "Back", onclick },
    h("span", { class: "icon", html: BACK_SVG }));

  /** The one-line banner saying what the last step did ("Message sent"); nothing when `text` is empty. */
  const noticeBar = (text, ...more) => (text ? h("div", { class: "notice", role: "status", "data-testid": "notice" }, text, ...more) : null);

  // A clearable text field is followed directly by its [data-role=clear] button, which solvers tap on a phone (it has no
  // ctrl+a). The button shows only while the field holds text; a click empties the field, focuses it, then runs
  // `cleared` (by default it fires "input", as typing would).
  function clearable(input, cleared = () => input.dispatchEvent(new Event("input"))) {
    const button = input.nextElementSibling;
    const sync = () => button.classList.toggle("hidden", !input.value);
    input.addEventListener("input", sync);
    button.addEventListener("click", (e) => {
      e.preventDefault();
      input.value = "";
      input.focus();
      cleared();
    });
    sync();
  }

  /** <div class="field"> holding `input` and its clear button, for fields built in code (`label` names the field). */
  function clearableField(input, label) {
    const field = h("div", { class: "field" }, input,
      h("button", { type: "button", "data-role": "clear", class: "clear", "aria-label": "Clear " + label }, "×"));
    clearable(input);
    return field;
  }

  /** Shows or hides every clear button after code has set field values (which fires no "input"). */
  function syncClearButtons() {
    for (const button of $$("[data-role=clear]")) button.classList.toggle("hidden", !button.previousElementSibling.value);
  }

  // The confirm dialog shown before a destructive step (#confirm with #confirm-ok and #confirm-cancel). It has a fixed
  // `text`, or, without one, an empty #confirm-text that ask(text) fills. Cancel closes it; OK closes it, then runs onOk.
  function confirmDialog({ title, text, ok, onOk }) {
    const close = () => dialog.classList.add("hidden");
    const dialog = h("div", {
      class: "modal-backdrop hidden", id: "confirm", "data-testid": "confirm-dialog", role: "dialog", "aria-modal": "true",
      "aria-labelledby": "confirm-title",
    }, h("div", { class: "modal" },
      h("h2", { id: "confirm-title" }, title),
      h("p", text ? {} : { id: "confirm-text" }, text),
      h("div", { class: "modal-actions" },
        h("button", { "data-testid": "confirm-cancel", id: "confirm-cancel", onclick: close }, "Cancel"),
        h("button", { class: "danger", "data-testid": "confirm-ok", id: "confirm-ok", onclick: () => { close(); onOk(); } }, ok))));
    document.body.append(dialog);
    return function ask(message) {
      if (message != null) dialog.querySelector("#confirm-text").textContent = message;
      dialog.classList.remove("hidden");
    };
  }

  // Screens named in the URL hash ("note/n2") and pushed on the history, so a phone's Back walks back through them.
  // go(r) opens a screen (replace: in place of this one); back(to) shows `to` at once, through history when the app
  // pushed this entry, else in place of it (replace=false: pushed). render runs after every change, popstate included.
  function hashRoutes(render) {
    const read = () => location.hash.replace(/^#/, "");
    const nav = {
      route: read(),
      go(r, replace) {
        nav.route = r;
        const url = r ? "#" + r : location.pathname + location.search;
        if (replace) history.replaceState(history.state, "", url);
        else history.pushState({ inApp: true }, "", url);
        window.scrollTo(0, 0);
        render();
      },
      back(to, replace = true) {
        if (!(history.state && history.state.inApp)) return nav.go(to, replace);
        nav.route = to;
        history.back();
        window.scrollTo(0, 0);
        render();
      },
    };
    window.addEventListener("popstate", () => { nav.route = read(); window.scrollTo(0, 0); render(); });
    return nav;
  }

  // Screens named in the URL hash ("#/message/m1") of the apps that rebuild the page on each render: go(hash) shows one
  // (rendering again when it is shown already). Each change first runs leave() (dropping transient UI such as open
  // menus); a hash change also scrolls to the top.
  function hashScreens(render, leave = () => {}) {
    window.addEventListener("hashchange", () => { leave(); render(); window.scrollTo(0, 0); });
    return function go(hash) {
      leave();
      if (location.hash === hash) render(); else location.hash = hash;
    };
  }

  window.widgets = Object.freeze({
    $, $$, ready, h, iconSet, backButton, noticeBar, clearable, clearableField, syncClearButtons, confirmDialog,
    hashRoutes, hashScreens,
  });
})();
