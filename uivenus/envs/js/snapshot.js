// What an Observation reads of the page besides the pixels (after them, so it is never older than they are).
(limit) => ({text: document.body ? document.body.innerText.slice(0, limit) : "",
  title: document.title, app: (window.uivenus && window.uivenus.app) || null})
