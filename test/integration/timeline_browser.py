#!/usr/bin/env python3
"""Drives headless Chromium over the DevTools protocol on a pipe (--remote-debugging-pipe:
no port, no websocket, nothing beyond Python's standard library) to check timeline pages.

  timeline_browser.py scenario PAGE.html SVG.svg ARTIFACT_DIR   the scripted scenario's page and SVG
  timeline_browser.py empty PAGE.html EXPECTED_TEXT ARTIFACT_DIR  a page that must say why it is empty
  timeline_browser.py story PAGE.html ARTIFACT_DIR               a job's story (cairn log audit --html)
  timeline_browser.py aggregate PAGE.html ARTIFACT_DIR           a busy cluster: occupancy zoomed out, bars zoomed in
  timeline_browser.py measure PAGE.html [RUNS]                   prints how long the page took to be ready

Exit status 0 when every check passed, 1 otherwise (each failure printed), 77 when
Chromium cannot be found."""

import base64
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

FAILURES = []


def check(condition, what):
    print(("ok   " if condition else "FAIL ") + what)
    if not condition:
        FAILURES.append(what)


def find_chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


class Browser:
    def __init__(self, binary):
        self.profile = tempfile.mkdtemp(prefix="cairn-chromium-")
        commands_read, self.commands = os.pipe()
        self.replies, replies_write = os.pipe()

        def child_fds():  # the protocol's fds: 3 (commands in) and 4 (replies out)
            a, b = os.dup(commands_read), os.dup(replies_write)
            os.dup2(a, 3)
            os.dup2(b, 4)
            os.set_inheritable(3, True)
            os.set_inheritable(4, True)

        self.process = subprocess.Popen(
            [binary, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
             "--no-first-run", "--no-default-browser-check", "--disable-extensions", "--mute-audio",
             "--hide-scrollbars", "--user-data-dir=" + self.profile, "--remote-debugging-pipe", "about:blank"],
            preexec_fn=child_fds, close_fds=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(commands_read)
        os.close(replies_write)
        self.buffer = b""
        self.next_id = 0
        self.events = []

    def _receive(self, deadline):
        while b"\0" not in self.buffer:
            if time.time() > deadline:
                raise TimeoutError("no answer from chromium")
            chunk = os.read(self.replies, 1 << 20)
            if not chunk:
                raise RuntimeError("chromium closed the pipe")
            self.buffer += chunk
        message, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(message)

    def call(self, method, params=None, session=None, timeout=120):
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self.commands, json.dumps(message).encode() + b"\0")
        deadline = time.time() + timeout
        while True:
            reply = self._receive(deadline)
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def wait_event(self, method, session, timeout=120):
        deadline = time.time() + timeout
        while True:
            for i, event in enumerate(self.events):
                if event.get("method") == method and event.get("sessionId") == session:
                    return self.events.pop(i)
            self.events.append(self._receive(deadline))

    def open(self, url, javascript=True, width=1400, height=900):
        """A new tab showing url; its session id once the page has loaded."""
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        self.call("Page.enable", session=session)
        self.call("Runtime.enable", session=session)
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False}, session)
        if not javascript:
            self.call("Emulation.setScriptExecutionDisabled", {"value": True}, session)
        self.events = [e for e in self.events if e.get("sessionId") != session]
        self.call("Page.navigate", {"url": url}, session)
        self.wait_event("Page.loadEventFired", session)
        return session

    def evaluate(self, session, expression):
        result = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True}, session)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def script_errors(self, session):
        return [e["params"]["exceptionDetails"].get("exception", {}).get("description", "?")
                for e in self.events
                if e.get("method") == "Runtime.exceptionThrown" and e.get("sessionId") == session]

    def outer_html(self, session):
        root = self.call("DOM.getDocument", {"depth": -1, "pierce": True}, session)["root"]["nodeId"]
        return self.call("DOM.getOuterHTML", {"nodeId": root}, session)["outerHTML"]

    def screenshot(self, session, path):
        metrics = self.call("Page.getLayoutMetrics", session=session)
        size = metrics.get("cssContentSize") or metrics["contentSize"]
        width, height = int(size["width"]), min(int(size["height"]), 8000)
        shot = self.call("Page.captureScreenshot", {
            "format": "png", "captureBeyondViewport": True,
            "clip": {"x": 0, "y": 0, "width": width, "height": height, "scale": 1}}, session)
        with open(path, "wb") as out:
            out.write(base64.b64decode(shot["data"]))
        print(f"screenshot: {path}")

    def close(self):
        try:
            self.call("Browser.close", timeout=10)
        except Exception:
            pass
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        shutil.rmtree(self.profile, ignore_errors=True)


def url_of(path):
    return "file://" + os.path.abspath(path)


def count(browser, session, selector):
    return browser.evaluate(session, f"document.querySelectorAll({json.dumps(selector)}).length")


def check_drawing(browser, session, scope, how):
    """The scripted scenario as drawn, inside `scope` (a CSS selector for the drawing)."""
    def n(selector):
        return count(browser, session, f"{scope} {selector}")
    runs = browser.evaluate(session, f"""Array.from(document.querySelectorAll('{scope} rect.run'))
        .map(r => r.getAttribute('data-job') + '.' + r.getAttribute('data-run')).sort().join(' ')""")
    check(runs == "1.0 2.0 2.1 3.0 4.0 4.1 5.0 6.0", f"{how}: a bar per job run (got {runs!r})")
    states = browser.evaluate(session, f"""Array.from(document.querySelectorAll('{scope} rect.run'))
        .map(r => r.getAttribute('data-job') + '.' + r.getAttribute('data-run') + '=' + r.getAttribute('data-state'))
        .sort().join(' ')""")
    check("2.0=OUT_OF_MEMORY" in states and "4.0=NODE_FAIL" in states and "5.0=CANCELLED" in states,
          f"{how}: bars carry their final state ({states})")
    colours = browser.evaluate(session, f"""(() => {{
        const r = document.querySelector('{scope} rect.run[data-job="2"][data-run="0"]');
        const c = document.querySelector('{scope} rect.run[data-job="1"][data-run="0"]');
        return [r && r.getAttribute('fill'), c && c.getAttribute('fill')]; }})()""")
    check(colours[0] and colours[1] and colours[0] != colours[1], f"{how}: coloured by final state ({colours})")
    hatch = browser.evaluate(session, f"""Array.from(document.querySelectorAll('{scope} rect.suspend'))
        .map(r => r.getAttribute('data-job') + ':' + r.getAttribute('fill'))""")
    check(hatch == ["1:url(#hatch)"], f"{how}: the suspend hatch is on the suspended job only ({hatch})")
    check(n("pattern#hatch") == 1, f"{how}: the hatch pattern is defined")
    check(n('path.oom[data-job="2"]') == 1, f"{how}: the OOM marker on job 2")
    check(n("path.oom[data-job]") == 1, f"{how}: one OOM marker in all")
    check(n('path.node-fail[data-job="4"]') == 1, f"{how}: the node-failure marker on job 4")
    check(n('path.requeue-link[data-job="2"]') == 1 and n('path.requeue-link[data-job="4"]') == 1,
          f"{how}: requeues linked (jobs 2 and 4)")
    stages = browser.evaluate(session, f"""Array.from(document.querySelectorAll('{scope} rect.stage'))
        .map(r => r.getAttribute('data-job') + ':' + r.getAttribute('data-direction')).sort().join(' ')""")
    check(stages == "3:in 3:out", f"{how}: stage-in and stage-out bars ({stages!r})")
    check(n('rect.node-down[data-node="n1"]') == 1, f"{how}: n1's down time")
    check(n("path.utilisation") >= 3, f"{how}: utilisation per partition and for the cluster")
    check(n("path.queue") == 5, f"{how}: queue length by pending reason")


def scenario(browser, page, svg, artifacts):
    session = browser.open(url_of(page))
    check(browser.script_errors(session) == [], f"no script error ({browser.script_errors(session)})")
    check_drawing(browser, session, "#timeline", "JavaScript on")
    rendered = browser.evaluate(session, "document.documentElement.getAttribute('data-rendered-ms')")
    check(rendered is not None, f"the page says when it was ready ({rendered} ms)")
    browser.screenshot(session, os.path.join(artifacts, "timeline.png"))

    # Hovering a bar tells the run's story.
    tip = browser.evaluate(session, """(() => {
        const bar = document.querySelector('#timeline rect.run[data-job="1"][data-run="0"]'), box = bar.getBoundingClientRect();
        bar.dispatchEvent(new MouseEvent('mousemove', {clientX: box.x + 5, clientY: box.y + 3, bubbles: true}));
        const t = document.getElementById('tooltip'); return {hidden: t.hidden, text: t.textContent}; })()""")
    check(not tip["hidden"] and tip["text"].startswith("Job 1 (train) run 0 · alice\nCOMPLETED · exit 0:0") and
          "suspended 2026-11-18T11:06:50Z → 2026-11-18T11:07:05Z (15 s)" in tip["text"], f"hover: the run's tooltip ({tip})")

    # A click on job 2's bar opens its audit: what `cairn log audit --job 2` prints.
    browser.evaluate(session, """(() => {
        const bar = document.querySelector('#timeline rect.run[data-job="2"][data-run="0"]');
        const box = bar.getBoundingClientRect(), at = {clientX: box.x + box.width / 2, clientY: box.y + box.height / 2, bubbles: true};
        bar.dispatchEvent(new MouseEvent('mousedown', at));
        bar.dispatchEvent(new MouseEvent('mouseup', at)); })()""")
    panel = browser.evaluate(session, """(() => { const p = document.getElementById('panel');
        return {hidden: p.hidden, job: p.getAttribute('data-job'),
                rows: Array.from(p.querySelectorAll('tr.audit-row')).map(r => Array.from(r.cells).map(c => c.textContent))}; })()""")
    check(not panel["hidden"] and panel["job"] == "2", f"a click on job 2's bar opens its panel ({panel['job']})")
    events = [row[1] for row in panel["rows"]]
    check(events == ["JobSubmitted", "JobAllocated", "JobStarted", "OomDetected", "JobEnded", "JobRequeued",
                     "JobAllocated", "JobEnded"], f"job 2's audit in the panel ({events})")
    times = [row[0] for row in panel["rows"]][:3]
    check(times == ["2026-11-18T11:06:45.000000Z", "2026-11-18T11:06:46.000000Z", "2026-11-18T11:06:46.100000Z"],
          f"the audit's times, to the microsecond ({times})")
    check(any(row[1] == "JobRequeued" and row[2] == "root(0)/operator" for row in panel["rows"]),
          "the audit says who requeued it")
    check(any("out of memory on node=n2" in row[3] for row in panel["rows"]), "the audit details (OOM)")
    browser.screenshot(session, os.path.join(artifacts, "timeline-job2.png"))

    # Zoomed in on job 1, then out: still one bar per run in view, and no error.
    browser.evaluate(session, "window.cairnTimeline.setView(20000, 62000)")
    browser.evaluate(session, "window.cairnTimeline.render()")  # now, not at the next frame
    check(count(browser, session, '#timeline rect.suspend[data-job="1"]') == 1, "zoomed in: the hatch is still there")
    check(browser.script_errors(session) == [], "no script error after zooming")

    # The hash opens a job's panel as the page loads.
    session = browser.open(url_of(page) + "#job=3")
    check(browser.evaluate(session, "document.getElementById('panel').getAttribute('data-job')") == "3",
          "#job=3 opens job 3's audit")

    # Without JavaScript: the static SVG of the same data.
    session = browser.open(url_of(page), javascript=False)
    check(count(browser, session, "noscript svg.cairn-timeline") == 1 or
          count(browser, session, ".static svg.cairn-timeline") == 1, "JavaScript off: the static drawing is shown")
    check_drawing(browser, session, ".static", "JavaScript off")
    browser.screenshot(session, os.path.join(artifacts, "timeline-nojs.png"))

    # The --svg file on its own, without JavaScript either.
    session = browser.open(url_of(svg), javascript=False)
    check_drawing(browser, session, "svg.cairn-timeline", "--svg file")
    browser.screenshot(session, os.path.join(artifacts, "timeline-svg.png"))


def empty(browser, page, expected, artifacts):
    session = browser.open(url_of(page))
    check(browser.script_errors(session) == [], f"no script error ({browser.script_errors(session)})")
    message = browser.evaluate(session, "(document.querySelector('#timeline .empty-message') || {}).textContent")
    check(message is not None and expected in message, f"the chart says why it is empty ({message!r})")
    notices = browser.evaluate(session, "Array.from(document.querySelectorAll('.notices li')).map(l => l.textContent)")
    check(any(expected in notice for notice in notices), f"the header says it too ({notices})")
    check(count(browser, session, "#timeline rect.run") == 0, "no bar")
    name = os.path.splitext(os.path.basename(page))[0]
    browser.screenshot(session, os.path.join(artifacts, name + ".png"))
    session = browser.open(url_of(page), javascript=False)
    text = browser.evaluate(session, "(document.querySelector('.static .empty-message') || {}).textContent")
    check(text is not None and expected in text, f"JavaScript off: the static drawing says why ({text!r})")


def story(browser, page, artifacts):
    session = browser.open(url_of(page), javascript=False)
    states = browser.evaluate(session, "Array.from(document.querySelectorAll('rect.state')).map(r => r.getAttribute('data-state'))")
    check(states == ["PENDING", "RUNNING", "PENDING", "RUNNING"], f"job 4's states over time ({states})")
    check(count(browser, session, "rect.run") == 2, "its two runs")
    check(count(browser, session, "path.node-fail") == 1, "the node failure")
    rows = browser.evaluate(session, "Array.from(document.querySelectorAll('table.audit tbody tr')).map(r => r.cells[1].textContent)")
    check(rows[:3] == ["JobSubmitted", "JobAllocated", "JobEnded"], f"who did what, in order ({rows})")
    check(count(browser, session, "circle.event") == len(rows), "a mark per event on the picture")
    browser.screenshot(session, os.path.join(artifacts, "audit-job4.png"))


def aggregate(browser, page, artifacts):
    session = browser.open(url_of(page))
    check(browser.script_errors(session) == [], f"no script error ({browser.script_errors(session)})")
    stats = browser.evaluate(session, "window.cairnTimeline.stats")
    check(stats["aggregated"] and count(browser, session, "#timeline path.agg") > 0 and
          count(browser, session, "#timeline rect.run") == 0, f"zoomed out: CPU occupancy, not bars ({stats})")
    print("opened in", browser.evaluate(session, "document.documentElement.getAttribute('data-rendered-ms')"), "ms")
    browser.screenshot(session, os.path.join(artifacts, "busy-zoomed-out.png"))
    browser.evaluate(session, "window.cairnTimeline.setView(36000000, 37200000)")  # 20 minutes, 10 h in
    browser.evaluate(session, "window.cairnTimeline.render()")  # now, not at the next frame
    stats = browser.evaluate(session, "window.cairnTimeline.stats")
    bars = count(browser, session, "#timeline rect.run")
    check(not stats["aggregated"] and 0 < bars <= 4000, f"zoomed in: one bar per run in view ({bars} bars, {stats})")
    browser.screenshot(session, os.path.join(artifacts, "busy-zoomed-in.png"))
    check(browser.script_errors(session) == [], "no script error after zooming")
    session = browser.open(url_of(page), javascript=False)
    check(count(browser, session, ".static path.agg") > 0 and count(browser, session, ".static rect.run") == 0,
          "JavaScript off: the static drawing aggregates too")


def measure(browser, page, runs):
    session = browser.open(url_of(page))
    errors = browser.script_errors(session)
    rendered = browser.evaluate(session, "document.documentElement.getAttribute('data-rendered-ms')")
    timing = browser.evaluate(session, """(() => { const t = performance.getEntriesByType('navigation')[0];
        return {dom: Math.round(t.domContentLoadedEventEnd), load: Math.round(t.loadEventEnd)}; })()""")
    stats = browser.evaluate(session, "window.cairnTimeline && window.cairnTimeline.stats")
    # A zoom into a tenth of the window, timed in the page.
    zoom_ms = browser.evaluate(session, """(() => { const t0 = performance.now(); const d = JSON.parse(document.getElementById('cairn-data').textContent);
        window.cairnTimeline.setView(d.to * 0.45, d.to * 0.55); window.cairnTimeline.render(); return performance.now() - t0; })()""")
    size = os.path.getsize(page) / 1e6
    print(f"timeline page, {runs} runs, {size:.1f} MB: ready {rendered} ms after navigation "
          f"(DOMContentLoaded {timing['dom']} ms, load {timing['load']} ms); zoom redraw {zoom_ms:.0f} ms; "
          f"first view {stats}")
    check(errors == [], f"no script error ({errors})")


def main(argv):
    if len(argv) < 2:
        print(__doc__)
        return 2
    binary = find_chromium()
    if not binary:
        print("SKIP: chromium is not installed (deploy/install-deps.sh installs Debian's chromium)")
        return 77
    browser = Browser(binary)
    try:
        mode = argv[1]
        if mode == "scenario":
            os.makedirs(argv[4], exist_ok=True)
            scenario(browser, argv[2], argv[3], argv[4])
        elif mode == "empty":
            os.makedirs(argv[4], exist_ok=True)
            empty(browser, argv[2], argv[3], argv[4])
        elif mode == "story":
            os.makedirs(argv[3], exist_ok=True)
            story(browser, argv[2], argv[3])
        elif mode == "aggregate":
            os.makedirs(argv[3], exist_ok=True)
            aggregate(browser, argv[2], argv[3])
        elif mode == "measure":
            measure(browser, argv[2], argv[3] if len(argv) > 3 else "?")
        else:
            print(__doc__)
            return 2
    finally:
        browser.close()
    if FAILURES:
        print(f"{len(FAILURES)} check(s) failed")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
