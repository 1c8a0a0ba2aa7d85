// What the env reads of a page besides its pixels; read-only. One script, so that the element the guard reads is
// described the same way whether it comes with the observation or from a query:
//   {limit: N}      -> the observation's read: {text (first N chars), title, app, focused (the focused element)}
//   {point: [x, y]} -> the element at that point; {point: null} -> the focused element (null: none, or blank page)
// An element is a small dict: the nearest interactive ancestor's tag, text, labels, the form's submit button, its
// checked state, a link's target (href, absolute) and its place among the elements of its kind (nth, 1-based, in
// document order).
(arg) => {
  const clean = (s) => (s || "").replace(/\s+/g, " ").trim().slice(0, 200);
  const describe = (el) => {
    if (!el || el === document.body || el === document.documentElement) return null;
    const active = el.closest("button, a[href], input, select, textarea, label, summary, [role=button], [role=link], " +
      "[role=menuitem], [role=switch], [role=checkbox], [role=tab], [onclick], [data-testid]") || el;
    const attr = (n) => active.getAttribute(n);
    const labels = active.labels ? Array.from(active.labels).map((l) => clean(l.innerText)).join(" ") : "";
    const isButtonInput = active.tagName === "INPUT" && /^(submit|button|reset)$/i.test(attr("type") || "");
    const form = active.form || active.closest("form");
    let submit = null;
    if (form) {
      const b = form.querySelector("button[type=submit], button:not([type]), input[type=submit]");
      if (b) submit = clean(b.innerText || b.value || b.getAttribute("aria-label")) + " " +
        (b.dataset.testid || b.id || "");
    }
    return {
      tag: active.tagName.toLowerCase(), text: clean(active.innerText || active.textContent),
      aria_label: attr("aria-label"), title: attr("title"), type: attr("type"), name: attr("name"), id: active.id,
      testid: active.dataset ? active.dataset.testid || null : null, autocomplete: attr("autocomplete"),
      placeholder: attr("placeholder"), role: attr("role"), label: labels,
      value: isButtonInput ? clean(active.value) : null, submit: submit ? clean(submit) : null,
      checked: "checked" in active ? !!active.checked : null, href: active.tagName === "A" ? active.href || null : null,
      nth: Array.from(document.getElementsByTagName(active.tagName))
        .filter((e) => (e.getAttribute("type") || "") === (attr("type") || "")).indexOf(active) + 1,
    };
  };
  if ("limit" in arg) {
    return {text: document.body ? document.body.innerText.slice(0, arg.limit) : "", title: document.title,
      app: (window.uivenus && window.uivenus.app) || null, focused: describe(document.activeElement)};
  }
  const point = arg.point;
  return describe(point ? document.elementFromPoint(point[0], point[1]) : document.activeElement);
}
