// Every visible interactive element with a test id (or DOM id): what it is, its state, whether something
// covers its centre (a modal over the page). Field clear buttons are left out: they belong to their field.
() => {
  const SEL = "button, a[href], input, textarea, select, [role=switch], [role=radio], [role=button], [role=tab], [tabindex]";
  const clean = (s) => (s || "").replace(/\s+/g, " ").trim().slice(0, 80);
  const out = [];
  for (const el of document.querySelectorAll(SEL)) {
    const testid = el.dataset.testid || null;
    if ((!testid && !el.id) || el.dataset.role === "clear" || el.type === "hidden") continue;
    const r = el.getBoundingClientRect();
    const style = getComputedStyle(el);
    if (r.width <= 0 || r.height <= 0 || style.visibility === "hidden" || Number(style.opacity) === 0) continue;
    const x = r.left + r.width / 2, y = r.top + r.height / 2;
    let covered = false;
    if (x >= 0 && y >= 0 && x < innerWidth && y < innerHeight) {
      const top = document.elementFromPoint(x, y);
      covered = !!top && !(top === el || el.contains(top) || top.contains(el));
    }
    const data = Object.assign({}, el.dataset);
    delete data.testid;
    out.push({
      testid, domid: el.id || null, tag: el.tagName.toLowerCase(), type: (el.getAttribute("type") || "").toLowerCase(),
      role: el.getAttribute("role"), label: clean(el.getAttribute("aria-label") || el.innerText || el.placeholder || el.title),
      disabled: !!el.disabled || el.getAttribute("aria-disabled") === "true", covered, data,
      value: "value" in el && el.tagName !== "BUTTON" ? String(el.value) : null,
      min: el.min || null, max: el.max || null,
      options: el.tagName === "SELECT" ? Array.from(el.options).map((o) => [o.value, clean(o.text)]) : [],
    });
  }
  const heading = Array.from(document.querySelectorAll("h1, h2")).find((h) => h.getBoundingClientRect().height > 0);
  return {title: document.title, heading: heading ? clean(heading.innerText) : "", route: location.hash, elements: out};
}
