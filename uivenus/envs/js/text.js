// The innerText of the first match of a selector, or null.
(selector) => { const el = document.querySelector(selector); return el ? el.innerText : null; }
