// Centre of the first visible match of a selector inside the viewport, in CSS pixels, or null.
(selector) => {
  for (const el of document.querySelectorAll(selector)) {
    const r = el.getBoundingClientRect();
    const style = getComputedStyle(el);
    if (r.width <= 0 || r.height <= 0 || style.visibility === "hidden" || Number(style.opacity) === 0) continue;
    const x = Math.round(r.left + r.width / 2), y = Math.round(r.top + r.height / 2);
    if (x >= 0 && y >= 0 && x < innerWidth && y < innerHeight) return [x, y];
  }
  return null;
}
