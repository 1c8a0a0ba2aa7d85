// The settle check: load state and the tabs the page tried to open since the last check. It runs ahead of work
// the action only queued (DevTools evaluations jump the page's task queue), so it reads no text: see `_capture`.
() => {
  const tabs = window.__uivenusTabs || 0;
  window.__uivenusTabs = 0;
  return {ready: document.readyState, tabs: tabs};
}
