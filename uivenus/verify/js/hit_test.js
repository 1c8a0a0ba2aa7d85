// What lies under a point: the nearest actionable ancestor (control, role, onclick, pointer cursor) or the bare
// element, with its text, the text of its labels, its kind (tag, role, input type) and its place among the elements
// of the same kind (nth, 1-based, in document order: "the 2nd input"); read-only.
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
  const control = target.tagName === "LABEL" && target.control ? target.control : target;  // a label acts on it
  const disabled = !!(hit && (target.disabled || target.getAttribute("aria-disabled") === "true"));
  const text = clean(target.innerText || (target.type === "checkbox" || target.type === "radio" ? "" : target.value) ||
    target.getAttribute("aria-label") || target.getAttribute("placeholder") || target.getAttribute("title"));
  const labels = control.labels ? Array.from(control.labels).map((l) => clean(l.innerText)).join(" ") : "";
  const type = control.getAttribute("type");
  const same = Array.from(document.getElementsByTagName(control.tagName))
    .filter((e) => (e.getAttribute("type") || "") === (type || ""));
  return {interactive: !!hit && !disabled, disabled, tag: target.tagName.toLowerCase(),
          role: target.getAttribute("role"), text, label: labels, control: control.tagName.toLowerCase(), type,
          id: control.id || null, name: control.getAttribute("name"),
          checked: "checked" in control ? !!control.checked : null, nth: same.indexOf(control) + 1,
          testid: (target.dataset && target.dataset.testid) || null,
          why: why || "plain element"};
}
