// Runs in every document before its scripts (an init script, not a function): counts attempts to open a tab, so
// the settle wait knows a new tab is coming before Chromium reports it (it arrives a little after the click).
(() => {
  const opening = () => { window.__uivenusTabs = (window.__uivenusTabs || 0) + 1; };
  const open = window.open;
  window.open = function (...args) { opening(); return open.apply(this, args); };
  document.addEventListener("click", (event) => {
    const link = event.target instanceof Element && event.target.closest("a[target], area[target]");
    if (link && !["", "_self", "_top", "_parent"].includes(link.target)) opening();
  }, true);
})();
