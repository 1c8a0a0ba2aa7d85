// SelectOption: picks option `index` of the <select> at a point (or the focused one) and fires input and change.
([point, index]) => {
  let el = point ? document.elementFromPoint(point[0], point[1]) : document.activeElement;
  const select = el && (el.tagName === "SELECT" ? el : el.closest("select"));
  if (!select) return {error: point ? `no <select> at (${point[0]}, ${point[1]})` : "no <select> has the focus"};
  if (index >= select.options.length)
    return {error: `the <select> has ${select.options.length} options; index ${index} is out of range`};
  select.selectedIndex = index;
  select.dispatchEvent(new Event("input", {bubbles: true}));
  select.dispatchEvent(new Event("change", {bubbles: true}));
  return {value: select.value, text: select.options[index].text};
}
