// Whether the page is a sandbox app (it defines window.uivenus.setup()).
() => !!(window.uivenus && typeof window.uivenus.setup === 'function')
