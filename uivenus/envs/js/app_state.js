// A sandbox app's state (window.uivenus.state()), or null on other pages.
() => (window.uivenus && typeof window.uivenus.state === 'function')
  ? window.uivenus.state() : null
