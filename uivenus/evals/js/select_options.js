// The option texts of the first <select> on the page, in order (a MiniWoB oracle picks the one the task names);
// read-only.
() => {
  const select = document.querySelector("select");
  return select ? Array.from(select.options).map((o) => o.text.trim()) : [];
}
