// The text a reader of the screenshot would see: text inside the viewport (and field values, or placeholders of
// empty fields), grouped into visual rows read left to right; read-only.
() => {
  const W = innerWidth, H = innerHeight, items = [];
  const shown = (r) => r.width > 0 && r.height > 0 && r.bottom > 0 && r.right > 0 && r.top < H && r.left < W;
  const clean = (s) => (s || "").replace(/\s+/g, " ").trim();
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const text = clean(n.nodeValue), parent = n.parentElement;
    if (!text || !parent || parent.closest("select, script, style, noscript")) continue;
    const style = getComputedStyle(parent);
    if (style.visibility === "hidden" || Number(style.opacity) === 0) continue;
    const range = document.createRange();
    range.selectNodeContents(n);
    const r = range.getBoundingClientRect();
    if (shown(r)) items.push([r.top, r.left, r.height, text]);
  }
  for (const el of document.querySelectorAll("input, textarea, select")) {
    const r = el.getBoundingClientRect();
    if (!shown(r) || getComputedStyle(el).visibility === "hidden") continue;
    let text = "";
    if (el.tagName === "SELECT") text = el.selectedOptions.length ? el.selectedOptions[0].text : "";
    else if (!/^(checkbox|radio|range|hidden|submit|button|reset)$/i.test(el.type || "")) {
      text = el.type === "password" ? "•".repeat(el.value.length) : (el.value || el.placeholder || "");
    } else if (/^(submit|button|reset)$/i.test(el.type || "")) text = el.value || "";
    if (clean(text)) items.push([r.top + r.height / 2 - 8, r.left + 4, 16, clean(text)]);
  }
  items.sort((a, b) => (a[0] + a[2] / 2) - (b[0] + b[2] / 2) || a[1] - b[1]);
  const rows = [];
  for (const item of items) {
    const centre = item[0] + item[2] / 2, last = rows[rows.length - 1];
    if (last && Math.abs(centre - last.centre) <= Math.max(item[2], 8) / 2) last.items.push(item);
    else rows.push({centre, items: [item]});
  }
  return rows.map((row) => row.items.sort((a, b) => a[1] - b[1]).map((i) => i[3]).join(" ")).join("\n");
}
