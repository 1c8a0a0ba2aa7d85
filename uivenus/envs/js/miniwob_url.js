// Where the page is now (a page that left its task reports it).
() => location.href
