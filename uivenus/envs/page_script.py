"""Page scripts: the fixed JavaScript a browser env runs in its pages, shipped as `.js` files in the package.

Every layer keeps its scripts in a `js/` folder beside its modules (`uivenus/envs/js/`, `uivenus/verify/js/`, …)
and names them with `page_script(package, name)`, which reads the file once. Two reasons: a script in a `.js`
file is read, linted and diffed as JavaScript, not as a Python string; and `BrowserEnv.query_dom` runs only
`PageScript`s, so everything a page is made to run is source reviewed in this package, never a string put
together at run time. Data goes in as the script's argument, never as code.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from importlib import resources

#: The folder, inside each package that has page scripts, holding its `.js` files.
SCRIPT_FOLDER = "js"


@dataclass(frozen=True)
class PageScript:
    """One packaged page script: a JavaScript function expression (or, for init scripts, a statement)."""

    name: str  # its path in the source tree ("uivenus/verify/js/hit_test.js"), for messages
    source: str


@functools.cache
def page_script(package: str, name: str) -> PageScript:
    """The script `<package>/js/<name>` (e.g. `page_script("uivenus.verify", "hit_test.js")`), read once."""
    source = resources.files(package).joinpath(SCRIPT_FOLDER, name).read_text(encoding="utf-8")
    return PageScript(f"{package.replace('.', '/')}/{SCRIPT_FOLDER}/{name}", source)
