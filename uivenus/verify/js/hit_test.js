// What lies under a point: the nearest actionable ancestor (control, role, onclick, pointer cursor) or the bare
// element, with its text; read-only.
(point) => {
  const clean = (s) => (s || "").replace(/\s+/g, " ").trim().slice(0, 160);
  const el = document.elementFromPoint(point[0], point[1]);
  if (!el) return {interactive: false, disabled: false, tag: null, role: null, text: "", testid: null, why: "nothing"};
  const controls = "button, a[href], input, select, textarea, label, summary, option, [role=button], [role=link], " +
    "[role=menuitem], [role=switch], [role=checkbox], [role=radio], [role=tab], [role=option], [role=slider], " +
    "[onclick], [contenteditable=true]";
  let hit = el.closest(controls), why = hit ? "control" : null;
  for (let e = el; !hit && e && e !== document.body && e !== document.documentElement; e = e.parentElement) {
    if (getComputedStyle(e).cursor === "pointer" || typeof e.onclick === "function" || e.tabIndex >= 0) {
      hit = e; why = "pointer";
    }
  }
  const target = hit || el;
  const disabled = !!(hit && (hit.disabled || hit.getAttribute("aria-disabled") === "true"));
  const text = clean(target.innerText || target.value || target.getAttribute("aria-label") ||
    target.getAttribute("placeholder") || target.getAttribute("title"));
  return {interactive: !!hit && !disabled, disabled, tag: target.tagName.toLowerCase(),
          role: target.getAttribute("role"), text, testid: (target.dataset && target.dataset.testid) || null,
          why: why || "plain element"};
}
