// What a screen-reading agent sees of a page besides its pixels: every visible element it could act on (and every
// picture), with its label, whether it takes clicks (or typing) and its box in viewport pixels, in document order. Read-only. Pictures carry no label
// (their text, if any, is only in their pixels: whoever wants it must read them).
() => {
  const SEL = "button, a[href], input, textarea, select, summary, label, img, [role=button], [role=link], " +
    "[role=switch], [role=checkbox], [role=tab], [role=menuitem], [onclick], [data-testid]";
  const clean = (s) => (s || "").replace(/\s+/g, " ").trim().slice(0, 160);
  const out = [];
  for (const el of document.querySelectorAll(SEL)) {
    const r = el.getBoundingClientRect();
    const style = getComputedStyle(el);
    if (r.width < 2 || r.height < 2 || style.visibility === "hidden" || Number(style.opacity) === 0) continue;
    if (r.right <= 0 || r.bottom <= 0 || r.left >= innerWidth || r.top >= innerHeight) continue;
    const tag = el.tagName.toLowerCase();
    const labels = el.labels ? Array.from(el.labels).map((l) => l.innerText).join(" ") : "";
    const label = tag === "img" ? "" : clean(el.getAttribute("aria-label") || el.innerText || el.value ||
      el.getAttribute("placeholder") || labels || el.title || el.getAttribute("name"));
    const hint = clean([el.getAttribute("placeholder"), labels, el.getAttribute("name"), el.getAttribute("aria-label")]
      .filter(Boolean).join(" "));
    const editable = tag === "textarea" || el.isContentEditable ||
      (tag === "input" && !/^(button|submit|reset|checkbox|radio|range|hidden|file|image)$/i.test(el.type || ""));
    const clickable = editable || style.cursor === "pointer" || el.matches("button, a[href], input, select, summary, " +
      "[role=button], [role=link], [role=switch], [role=checkbox], [role=tab], [role=menuitem]");
    out.push({tag, label, hint, editable, clickable, box: [r.left, r.top, r.right, r.bottom].map((v) => Math.round(v))});
  }
  return out;
}
