#!/usr/bin/env python3
"""Opens an attn HTML heatmap page in headless Chromium and drives it as a
reader would, through the DevTools protocol over a pipe (Python's standard
library only; no node, no websocket):

  html_page_check.py PAGE.html [--cell Q,K] [--token q:I|k:I]
                     [--select ID=VALUE] [--screenshot OUT.png] [--width PX]

It loads the page from file://, waits for its script to finish, then, in
order: hovers the cell (row Q, column K) of the matrix and reads the
tooltip; hovers token I of the head view's query (q) or key (k) column and
counts the lines left visible; chooses VALUE in the <select> ID (e.g.
select-head=-1 for the mean of heads) and reads the panel caption; finally
hovers the cell again and takes a screenshot of the whole page. Console
errors, uncaught exceptions and blocked requests are collected all along.

Prints one JSON object on stdout. Exit 0 when it ran, 77 (with the reason
on stderr) when Chromium is missing or cannot start here, 1 on a timeout
or a protocol failure.
"""
import argparse
import base64
import fcntl
import json
import os
import pathlib
import select
import shutil
import subprocess
import sys
import tempfile
import time

SKIP = 77


class Browser:
    def __init__(self, binary, profile):
        to_child_r, self.to_child = os.pipe()
        self.from_child, from_child_w = os.pipe()

        def wire():  # the child reads commands on fd 3, answers on fd 4
            # Moved out of the way first: either end may already sit on 3 or 4.
            high_r = fcntl.fcntl(to_child_r, fcntl.F_DUPFD, 10)
            high_w = fcntl.fcntl(from_child_w, fcntl.F_DUPFD, 10)
            os.dup2(high_r, 3)
            os.dup2(high_w, 4)
            os.set_inheritable(3, True)
            os.set_inheritable(4, True)

        self.proc = subprocess.Popen(
            [binary, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--no-default-browser-check", "--disable-extensions", "--hide-scrollbars",
             "--user-data-dir=" + profile, "--remote-debugging-pipe", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            close_fds=False, preexec_fn=wire)  # fds 3 and 4 must survive; others
        # of this process are not inheritable (PEP 446) and close at exec.
        os.close(to_child_r)
        os.close(from_child_w)
        self.buffer = b""
        self.next_id = 0
        self.events = []

    def send(self, method, params=None, session=None, timeout=20):
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self.to_child, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            m = self.read(deadline)
            if m.get("id") == self.next_id:
                if "error" in m:
                    raise RuntimeError(method + ": " + json.dumps(m["error"]))
                return m.get("result", {})
            self.events.append(m)

    def read(self, deadline):
        while b"\0" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no answer from chromium")
            ready, _, _ = select.select([self.from_child], [], [], left)
            if ready:
                chunk = os.read(self.from_child, 1 << 16)
                if not chunk:
                    raise EOFError("chromium closed the pipe")
                self.buffer += chunk
        message, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(message)

    def close(self):
        try:
            os.write(self.to_child, json.dumps({"id": 0, "method": "Browser.close"}).encode() + b"\0")
            self.proc.wait(timeout=10)
        except Exception:
            self.proc.kill()
            self.proc.wait()
        os.close(self.to_child)
        os.close(self.from_child)


def errors_in(events):
    """Console errors, exceptions and log errors (blocked or failed loads)."""
    out = []
    for e in events:
        method, p = e.get("method"), e.get("params", {})
        if method == "Runtime.exceptionThrown":
            d = p.get("exceptionDetails", {})
            out.append("exception: " + d.get("exception", {}).get("description", d.get("text", "")))
        elif method == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
            out.append("console.error: " + " ".join(str(a.get("value", a.get("description", "")))
                                                   for a in p.get("args", [])))
        elif method == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
            out.append("log: " + p["entry"].get("text", ""))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("page")
    ap.add_argument("--cell")
    ap.add_argument("--token")
    ap.add_argument("--select")
    ap.add_argument("--screenshot")
    ap.add_argument("--width", type=int, default=1280)
    ap.add_argument("--chromium", default=os.environ.get("CHROMIUM", ""))
    args = ap.parse_args()

    binary = args.chromium or shutil.which("chromium") or shutil.which("chromium-browser")
    if not binary:
        print("chromium is not installed", file=sys.stderr)
        return SKIP
    profile = tempfile.mkdtemp(prefix="attn-chromium-")
    try:
        b = Browser(binary, profile)
    except OSError as e:
        print("chromium cannot start: %s" % e, file=sys.stderr)
        shutil.rmtree(profile, ignore_errors=True)
        return SKIP
    result = {}
    try:
        try:
            targets = b.send("Target.getTargets", timeout=30)["targetInfos"]
        except (EOFError, TimeoutError, OSError) as e:  # OSError: a broken pipe
            err = b.proc.stderr.read1(4000).decode(errors="replace") if b.proc.poll() is not None else ""
            print("chromium cannot run here (%s) %s" % (e, err.strip()[-600:]), file=sys.stderr)
            return SKIP
        page = next(t for t in targets if t["type"] == "page")
        s = b.send("Target.attachToTarget", {"targetId": page["targetId"], "flatten": True})["sessionId"]
        for domain in ("Runtime", "Log", "Page"):
            b.send(domain + ".enable", session=s)
        b.send("Emulation.setDeviceMetricsOverride",
               {"width": args.width, "height": 600, "deviceScaleFactor": 1, "mobile": False}, session=s)
        url = pathlib.Path(args.page).resolve().as_uri()
        b.send("Page.navigate", {"url": url}, session=s)

        def js(expression):
            r = b.send("Runtime.evaluate", {"expression": expression, "returnByValue": True}, session=s)
            if "exceptionDetails" in r:
                raise RuntimeError("evaluate: " + json.dumps(r["exceptionDetails"])[:400])
            return r["result"].get("value")

        deadline = time.monotonic() + 30
        while js("document.readyState") != "complete" or js("document.body && document.body.dataset.ready") != "true":
            if time.monotonic() > deadline:
                break
            if errors_in(b.events):
                break
            time.sleep(0.05)
        else:
            result["ready"] = True
        result["url"] = url
        if not result.get("ready"):
            result["errors"] = errors_in(b.events)
            result["failure"] = "the page's script did not finish"
            print(json.dumps(result))
            return 1
        result["title"] = js("document.title")
        result["heading"] = js("document.getElementById('title').textContent")
        result["caption"] = js("document.getElementById('caption').textContent")

        def move(x, y):
            b.send("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": x, "y": y}, session=s)

        def hover_cell(q, k):
            x, y = js("""(function () {
              var m = document.getElementById('matrix'), r = m.getBoundingClientRect();
              var c = Number(m.dataset.cell);
              return [r.left + Number(m.dataset.x0) + (%d + 0.5) * c, r.top + Number(m.dataset.y0) + (%d + 0.5) * c];
            })()""" % (k, q))
            move(x, y)
            return js("""(function () {
              var t = document.getElementById('tooltip');
              return t.hidden ? null : t.innerText;
            })()""")

        def visible_links():
            return js("""(function () {
              var all = document.querySelectorAll('#headview line'), shown = [];
              all.forEach(function (l) { if (getComputedStyle(l).display !== 'none') shown.push([Number(l.dataset.q), Number(l.dataset.k)]); });
              return {total: all.length, shown: shown};
            })()""")

        if args.cell:
            q, k = (int(v) for v in args.cell.split(","))
            result["tooltip"] = hover_cell(q, k)
            result["links_on_cell_hover"] = visible_links()
            move(2, 2)
            result["tooltip_after_leave"] = js("document.getElementById('tooltip').hidden")
        if args.token:
            side, i = args.token.split(":")
            box = js("""(function () {
              var t = document.querySelector('#headview text[data-side="%s"][data-i="%d"]');
              if (!t) return null;
              var r = t.getBoundingClientRect();
              return [r.left + r.width / 2, r.top + r.height / 2, t.firstChild.nodeValue];
            })()""" % (side, int(i)))
            result["token"] = box and box[2]
            result["links_before"] = visible_links()
            if box:
                move(box[0], box[1])
                result["links_on_token_hover"] = visible_links()
                result["active_tokens"] = js(
                    "Array.prototype.map.call(document.querySelectorAll('#headview text.active'), function (t) { return t.firstChild.nodeValue; })")
                move(2, 2)
                result["links_after_leave"] = visible_links()["shown"].__len__()
            result["headview_note"] = js("(document.querySelector('#headview .note') || {}).textContent || null")
        if args.select:
            sid, value = args.select.split("=", 1)
            result["selected"] = js("""(function () {
              var s = document.getElementById(%s);
              if (!s) return null;
              s.value = %s;
              s.dispatchEvent(new Event('change'));
              return s.value;
            })()""" % (json.dumps(sid), json.dumps(value)))
            result["caption_after_select"] = js("document.getElementById('caption').textContent")
        if args.screenshot:
            height = js("Math.ceil(document.body.getBoundingClientRect().bottom) + 24")
            b.send("Emulation.setDeviceMetricsOverride",
                   {"width": args.width, "height": height, "deviceScaleFactor": 1, "mobile": False}, session=s)
            if args.cell:
                q, k = (int(v) for v in args.cell.split(","))
                hover_cell(q, k)
            shot = b.send("Page.captureScreenshot", {"format": "png"}, session=s)
            pathlib.Path(args.screenshot).write_bytes(base64.b64decode(shot["data"]))
            result["screenshot"] = args.screenshot
        time.sleep(0.1)
        js("0")  # collects the events that came meanwhile
        result["errors"] = errors_in(b.events)
    except (TimeoutError, EOFError, RuntimeError, StopIteration) as e:
        result["failure"] = "%s: %s" % (type(e).__name__, e)
        print(json.dumps(result))
        return 1
    finally:
        b.close()
        shutil.rmtree(profile, ignore_errors=True)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
