"""axe-core over the console's pages, in the browser journey.

axe-core (Deque Systems, MPL-2.0) is the accessibility engine browsers' own audit tools use. It
is not vendored here: scripts/lib.sh installs the PyPI package axe-playwright-python, pinned, with
no dependencies, only for the axe.min.js it carries, and this module reads that file from the
tools' virtual environment and runs it in the page selenium has open.

Two ways in:
- `check(driver, name)`: the page as it is now (a form with its problems shown, say); the journey
  calls it with every screenshot.
- `crawl(driver, starts, fetch)`: every console page a signed-in admin reaches by links from
  `starts`, each checked. Links that lead to files (CSV, PDF, ZIP, images) are not opened in the
  browser; `fetch(path)` (a GET with the session cookie, not following redirects) tells which
  answer with an HTML page.

Every violation is kept with the page it was found on; `report()` fails the journey with all of
them at once, so one run lists everything to mend.
"""
import importlib.util
import os
import re
import time
import urllib.parse

_source = None
violations = []
checked = []
# Seconds spent in axe-core (injecting it and running it), for the journey's summary: the
# accessibility checks are a large part of the journey's time.
seconds = 0.0


def _axe_source():
    global _source
    if _source is None:
        spec = importlib.util.find_spec("axe_playwright_python")
        if spec is None or not spec.submodule_search_locations:
            raise AssertionError("axe-playwright-python is not installed in the tools' environment (scripts/lib.sh installs it)")
        path = os.path.join(list(spec.submodule_search_locations)[0], "axe.min.js")
        with open(path, encoding="utf-8") as file:
            _source = file.read()
        assert _source.startswith("/*! axe v4."), "axe.min.js is not axe-core 4"
    return _source


def check(driver, name):
    """Runs axe-core on the page the driver has open; keeps what it finds, under `name`."""
    global seconds
    started = time.monotonic()
    driver.execute_script(_axe_source())
    result = driver.execute_async_script(
        """
        const done = arguments[arguments.length - 1];
        axe.run(document, {resultTypes: ["violations"]})
            .then(r => done({violations: r.violations.map(v => ({
                id: v.id, impact: v.impact, help: v.help,
                nodes: v.nodes.slice(0, 5).map(n => n.target.join(" ") + ": " + (n.failureSummary || "").split("\\n").slice(1, 2).join(""))
            }))}))
            .catch(e => done({error: String(e)}));
        """
    )
    seconds += time.monotonic() - started
    assert "error" not in result, f"axe-core failed on {name}: {result['error']}"
    checked.append(name)
    for violation in result["violations"]:
        violations.append((name, driver.current_url, violation))
    return result["violations"]


# Links not opened in the browser: files, and the one link that ends the session.
_FILE = re.compile(r"\.(csv|pdf|zip|png|svg|json|txt)$|/export|/download|/sheet\.pdf|/signout")
# Of the pages that differ only by an identifier (a participant, a response, a version), two of
# each kind are enough: the same template draws them.
_ID = re.compile(r"/(?:[0-9a-f]{8,}|[0-9]+|[A-Z0-9]{6,}-[A-Z0-9-]+)(?=/|$)")


def crawl(driver, base, starts, fetch, limit=250):
    """Checks every HTML page reachable by same-origin links from `starts` (paths); returns the
    paths checked. `fetch(path)` -> (status, content type)."""
    seen, kinds, queue, visited = set(), {}, list(starts), []
    while queue and len(visited) < limit:
        path = queue.pop(0)
        if path in seen:
            continue
        seen.add(path)
        kind = _ID.sub("/{id}", urllib.parse.urlsplit(path).path)
        if urllib.parse.urlsplit(path).query:
            kind += "?"
        if kinds.get(kind, 0) >= 2 or _FILE.search(urllib.parse.urlsplit(path).path):
            continue
        status, content_type = fetch(path)
        if status != 200 or not content_type.startswith("text/html"):
            continue
        kinds[kind] = kinds.get(kind, 0) + 1
        driver.get(base + path)
        check(driver, path)
        visited.append(path)
        for href in driver.execute_script("return Array.from(document.querySelectorAll('a[href]'), a => a.getAttribute('href'))"):
            link = urllib.parse.urljoin(path, href.split("#")[0])
            if link.startswith("/") and not link.startswith("//") and link not in seen:
                queue.append(link)
    return visited


def report():
    """Fails with every violation found, grouped by page."""
    assert checked, "axe-core checked no page"
    if not violations:
        return
    lines = [f"axe-core found {len(violations)} violation(s) on {len({name for name, _, _ in violations})} page(s):"]
    for name, url, violation in violations:
        lines.append(f"- {name} ({url}): {violation['id']} [{violation['impact']}] {violation['help']}")
        for node in violation["nodes"]:
            lines.append(f"    {node}")
    raise AssertionError("\n".join(lines))
