// What a page says went wrong: the texts of visible `*-error` elements and the visible disabled controls.
() => {
  const shown = (el) => { const r = el.getBoundingClientRect(); return r.width > 0 && r.height > 0; };
  const errors = {};
  for (const el of document.querySelectorAll("[data-testid$='-error'], [role=alert]")) {
    const text = (el.innerText || "").trim();
    if (text && shown(el)) errors[el.dataset.testid || el.id || "alert"] = text;
  }
  const disabled = Array.from(document.querySelectorAll("button:disabled, [aria-disabled=true]"))
    .filter(shown).map((el) => el.dataset.testid || el.id).filter(Boolean);
  return {errors, disabled};
}
