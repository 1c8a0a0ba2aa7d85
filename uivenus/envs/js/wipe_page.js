// Wipes what a page of this tab keeps across navigations (web storage, window.name) before the tab is reused for
// another episode (BrowserConfig.reuse_page); the env clears the origin's other storage and cookies through CDP.
() => {
  try { sessionStorage.clear(); } catch (e) { /* an opaque origin has none */ }
  try { localStorage.clear(); } catch (e) { /* idem */ }
  window.name = "";
}
