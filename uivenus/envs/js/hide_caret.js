// Runs in every document before its scripts (an init script): hides the text caret. Chromium blinks it, so two
// captures of a screen where nothing happened would differ (Playwright's screenshot hides it around every capture;
// this does it once per document, at no cost per step). Typing still shows where it goes: the text appears.
(() => {
  const sheet = new CSSStyleSheet();
  sheet.replaceSync("*, *::before, *::after { caret-color: transparent !important; }");
  document.adoptedStyleSheets = [...document.adoptedStyleSheets, sheet];
})();
