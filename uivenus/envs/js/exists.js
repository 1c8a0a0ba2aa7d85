// Whether any element matches a selector (visible or not).
(selector) => document.querySelector(selector) !== null
