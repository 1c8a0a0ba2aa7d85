// Reads the element at a point (or the focused one, for a null point) as a small dict; read-only.
(point) => {
  const clean = (s) => (s || "").replace(/\s+/g, " ").trim().slice(0, 200);
  let el = point ? document.elementFromPoint(point[0], point[1]) : document.activeElement;
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
  };
}
