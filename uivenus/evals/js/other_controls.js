// Visible controls other than the one under the point, nearest first (centres in screen pixels); read-only.
(point) => {
  const controls = "button, a[href], input, select, textarea, [role=switch], [role=button], [role=tab]";
  const here = document.elementFromPoint(point[0], point[1]);
  const mine = here && here.closest(controls);
  const out = [];
  for (const el of document.querySelectorAll(controls)) {
    if (el === mine || (mine && (el.contains(mine) || mine.contains(el))) || el.disabled) continue;
    const r = el.getBoundingClientRect();
    if (r.width < 4 || r.height < 4 || r.bottom <= 0 || r.right <= 0 || r.top >= innerHeight || r.left >= innerWidth) {
      continue;
    }
    const x = Math.min(Math.max(r.left + r.width / 2, 1), innerWidth - 2);
    const y = Math.min(Math.max(r.top + r.height / 2, 1), innerHeight - 2);
    const top = document.elementFromPoint(x, y);
    if (top && !el.contains(top)) continue;  // covered by something else
    out.push([Math.hypot(x - point[0], y - point[1]), Math.round(x), Math.round(y)]);
  }
  out.sort((a, b) => a[0] - b[0]);
  return out.slice(0, 5).map((o) => [o[1], o[2]]);
}
