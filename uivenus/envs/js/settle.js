// The settle check: load state, web fonts (the screenshot must not catch a fallback font) and the tabs the page
// tried to open since the last check. A DevTools evaluation jumps the page's task queue, so it first waits one
// timer task: work the action only queued (a `hashchange` render, a click handler's follow-up) runs before the
// check answers, and so before the screenshot.
async () => {
  await new Promise((resolve) => setTimeout(resolve, 0));
  const tabs = window.__uivenusTabs || 0;
  window.__uivenusTabs = 0;
  return {ready: document.readyState, fonts: document.fonts.status, tabs: tabs};
}
