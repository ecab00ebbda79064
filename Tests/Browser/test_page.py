#!/usr/bin/env python3
"""The reading page in a real browser: Debian's chromium, driven by Playwright for Python through
its executable path (no browser is downloaded). Run by scripts/test after the Swift tests, against
the debug binaries:

    python3 Tests/Browser/test_page.py [--bin .build/debug] [--screenshot docs/screenshot.png]

Each check prints one line; the first failure ends the run with exit 1."""
import fcntl
import http.server
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

from playwright.sync_api import sync_playwright

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ARGS = sys.argv[1:]
BIN = os.path.abspath(ARGS[ARGS.index("--bin") + 1]) if "--bin" in ARGS else os.path.join(ROOT, ".build", "debug")
SCREENSHOT = ARGS[ARGS.index("--screenshot") + 1] if "--screenshot" in ARGS else None
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ROW = 88


def send(handler, body, kind):
    """A 200 answer of `body` (bytes) as `kind`."""
    handler.send_response(200)
    handler.send_header("Content-Type", kind)
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


def check(condition, what):
    print(("ok   " if condition else "FAIL ") + what, flush=True)
    if not condition:
        raise SystemExit(1)


class Hostile(http.server.BaseHTTPRequestHandler):
    """An RSS feed a stranger wrote: markup in a title, script, a frame and remote pictures in content."""
    body = b"""<?xml version="1.0"?><rss version="2.0"><channel><title>Hostile &lt;b&gt;feed&lt;/b&gt;</title>
<item><guid>h1</guid><title>&amp;lt;img src=x onerror=alert(1)&amp;gt;</title><link>https://example.com/h1</link>
<description><![CDATA[<p>Text stays.</p><script>alert(2)</script><iframe src="https://example.com/frame"></iframe>
<img src="https://example.com/remote.png" onerror="alert(3)"><a href="javascript:alert(4)">js link</a>]]></description>
</item></channel></rss>"""

    def do_GET(self):
        send(self, self.body, "application/rss+xml")

    def log_message(self, *args):
        pass


class Articles(http.server.BaseHTTPRequestHandler):
    """Two stories whose content shows pictures from the demo server (set `pictures` first), older
    than every demo item: they sit at the end of the timeline, below the rows the checks count.
    Each has a thumbnail of its own, which serve's rounds may fetch; its content's pictures only
    opening the story fetches."""
    pictures = ""

    def do_GET(self):
        if self.path.startswith("/t.xml") or self.path.startswith("/page/"):
            return self.teaser()
        items = "".join(
            f"<item><guid>a{n}</guid><title>Article {n} zebrafinch</title><link>https://example.com/a{n}</link>"
            f"<pubDate>Mon, 0{n} Jan 2018 10:00:00 GMT</pubDate>"
            f'<media:thumbnail url="{self.pictures}/{900000 + 10 * n + 9}.png"/><content:encoded><![CDATA[<p>Story {n}</p>'
            + "".join(f'<p><img src="{self.pictures}/{900000 + 10 * n + k}.png" alt="shot {k}"></p>' for k in range(3))
            + f'<img src="data:image/png;base64,iVBORw0KGgo="></p>]]></content:encoded></item>' for n in (1, 2))
        body = ('<?xml version="1.0"?><rss version="2.0" xmlns:content="http://purl.org/rss/1.0/modules/content/" '
                'xmlns:media="http://search.yahoo.com/mrss/">'
                f"<channel><title>Articles</title>{items}</channel></rss>").encode()
        send(self, body, "application/rss+xml")

    def log_message(self, *args):
        pass


    def teaser(self):
        """/t.xml: a feed of two teasers (okapi) whose links are pages here, /page/N: an article
        with two pictures from the demo server, between a menu and comments."""
        base = f"http://127.0.0.1:{self.server.server_port}"
        if self.path.startswith("/t.xml"):
            items = "".join(
                f"<item><guid>t{n}</guid><title>Teaser {n} okapi</title><link>{base}/page/{n}</link>"
                f"<pubDate>Mon, 0{n} Jan 2017 10:00:00 GMT</pubDate><description>Two lines.</description></item>"
                for n in (1, 2))
            body = f'<?xml version="1.0"?><rss version="2.0"><channel><title>Teasers</title>{items}</channel></rss>'
            kind = "application/rss+xml"
        else:
            n = int(self.path.rsplit("/", 1)[1])
            paragraphs = "".join(
                f"<p>Okapi paragraph {k} of page {n}: the whole story at length, with commas, details and "
                f"quotes, as the teaser never tells it, sentence after sentence for the train.</p>"
                + (f'<img src="{self.pictures}/{950000 + 10 * n + k}.png" alt="okapi {k}">' if k < 2 else "")
                for k in range(4))
            body = (f'<html><head><title>Page {n}</title></head><body><nav class="menu"><a href="/">Home</a></nav>'
                    f'<article>{paragraphs}</article><section id="comments"><p>A comment.</p></section></body></html>')
            kind = "text/html; charset=utf-8"
        send(self, body.encode(), kind)


def start(command, env):
    return subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)


def wait_until(condition, seconds, what=None, page=None):
    """`condition()`'s first true value, asked every 0.1 s; after `seconds`, a failed check (or,
    with no `what`, its last value). With a `page`, it waits through the page, whose requests (all
    routed through the test) go on only while Playwright has the thread."""
    deadline = time.monotonic() + seconds
    while not (value := condition()):
        if time.monotonic() > deadline:
            if what is not None:
                check(False, f"{what} within {seconds} s")
            return value
        page.wait_for_timeout(100) if page else time.sleep(0.1)
    return value


def hold_pull_lock(home, page):
    """The data home's pull lock, taken once a running round has ended: while it is held no pull
    (serve's own, every 10 s) can fetch a picture behind a check's back."""
    lock = open(os.path.join(home, "pull.lock"), "a")

    def taken():
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            return False
    wait_until(taken, 120, "the pull lock is free", page)
    return lock


def main():
    work = tempfile.mkdtemp(prefix="feedsync-browser-")
    env = dict(os.environ, FEEDSYNC_HOME=os.path.join(work, "home"))
    feedsync = os.path.join(BIN, "feedsync")
    url_file, log = os.path.join(work, "url"), os.path.join(work, "requests.log")
    # Pictures take 100 ms each, so a pull is still fetching them while the reader scrolls.
    demo = start([os.path.join(BIN, "feedsync-demo-server"), "--items", "600", "--per-page", "50",
                  "--latency-ms", "100", "--url-file", url_file, "--log", log], env)
    hostile = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hostile)
    threading.Thread(target=hostile.serve_forever, daemon=True).start()
    articles = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Articles)
    threading.Thread(target=articles.serve_forever, daemon=True).start()
    serve = None
    try:
        wait_until(lambda: os.path.exists(url_file) and open(url_file).read(), 60, "the demo server listens")
        feed = open(url_file).read().strip()
        # The pictures of the first rows only (the window around the start of the list).
        subprocess.run([feedsync, "pull", "--feed", feed, "--quiet"], env=env, check=True)
        subprocess.run([feedsync, "pull", "--feed", f"http://127.0.0.1:{hostile.server_port}/feed.xml", "--quiet"],
                       env=env, check=True)
        # The hostile feed in a folder of its own: the feed menu groups by folder.
        subprocess.run([feedsync, "folder", "2", "Odd"], env=env, check=True, stdout=subprocess.DEVNULL)
        # A saved view: the feed menu lists it with its unread count.
        subprocess.run([feedsync, "view", "add", "Hundreds", 'title ~ "00$"'], env=env, check=True,
                       stdout=subprocess.DEVNULL)
        serve = start([feedsync, "serve", "--pull-every", "10s"], env)
        address = serve.stdout.readline().strip()
        check(re.match(r"^http://127\.0\.0\.1:\d+/\?token=[0-9a-f]{32}$", address) is not None,
              f"serve prints its address with a token: {address}")
        origin = address.split("/?")[0]

        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True)
            page = browser.new_page(viewport={"width": 900, "height": 800})
            outside, item_pages, dialogs = [], [], []
            page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))

            def route(handle):
                url = handle.request.url
                if not url.startswith(origin + "/"):
                    outside.append(url)
                    return handle.abort()
                if url.startswith(origin + "/api/items?"):
                    item_pages.append(int(re.search(r"[?&]page=(\d+)", url).group(1)))
                return handle.continue_()
            page.route("**/*", route)
            # A browser without the token (another local user's, or a page that found the port).
            stranger = browser.new_page()
            for path in ("/", "/app.js", "/api/items", "/pictures/1"):
                check(stranger.goto(origin + path).status == 403, f"{path} without the token is 403")
            stranger.close()
            # A cached picture in view cut short behind feedsync's back: the cache finds it damaged
            # when the page asks, answers 404 and drops it; the page asks for it again at once.
            listed = json.loads(subprocess.run([feedsync, "list", "--json", "--per-page", "5"], env=env,
                                               capture_output=True, text=True, check=True).stdout)["items"]
            damaged = next(item for item in listed if item["image"]["path"])
            whole = open(damaged["image"]["path"], "rb").read()
            with open(damaged["image"]["path"], "wb") as out:
                out.write(whole[:len(whole) // 2])
            page.goto(address)
            page.wait_for_selector(".row:not(.loading)")
            check(page.url == origin + "/", "the token leaves the address bar once the cookie is set")
            total = int(page.inner_text("#count").split()[0])
            check(total == 601, f"the list knows its length from the first page: {total} items")
            height = page.evaluate("document.getElementById('rows').offsetHeight")
            check(height == total * ROW, "the scrollbar is right from the start (rows × height)")
            page.wait_for_function("() => document.querySelector('#feed optgroup') !== null")
            groups = page.evaluate("""[...document.querySelectorAll('#feed optgroup')]
                .map(g => [g.label, [...g.children].map(o => o.textContent)])""")
            loose = page.evaluate("[...document.querySelectorAll('#feed > option')].map(o => o.textContent)")
            check(len(groups) == 2 and groups[0][0].startswith("Odd (") and len(groups[0][1]) == 1,
                  f"the feed menu groups the feeds by folder, with unread counts: {groups}")
            check(groups[1] == ["Views", ["Hundreds (6)"]], f"then the saved views, unread counted: {groups}")
            host = feed.split("/")[2]
            check(loose[1].startswith(host + " ("), f"a feed with no title of its own is named by its host: {loose}")
            check(loose[0] == "All feeds" and loose[1].endswith(" (600)"), f"the others first, unread counted: {loose}")
            dates = page.evaluate("[...document.querySelectorAll('.row .meta')].slice(0, 5).map(m => m.textContent)")
            dated = [d for d in dates if " · " in d]
            check(dated and all(re.search(r" · (\d\d:\d\d|\d{4}-\d\d-\d\d)$", d) for d in dated),
                  f"a row's date as list writes it, no seconds: {dates}")
            # In the list's own viewport (below the bar), where the reader sees rows.
            in_view = """[...document.querySelectorAll('.row img.thumb')].filter(img => {
                const view = document.getElementById('list').getBoundingClientRect();
                const box = img.getBoundingClientRect(); return box.bottom > view.top && box.top < view.bottom; })"""
            # Counted in the moment they are judged: the damaged one (below) may put its picture,
            # fetched again and not loaded yet, in place of its placeholder at any time.
            images = page.wait_for_function(f"""() => {{ const shown = {in_view};
                return shown.every(img => img.complete && img.naturalWidth > 0) && shown.length; }}""").json_value()
            check(images >= 7, f"every cached picture in view has loaded ({images})")
            page.wait_for_function(f"""() => [...document.querySelectorAll('.row[data-number="{damaged['number']}"] img')]
                .some(img => img.complete && img.naturalWidth > 0)""")
            check(open(damaged["image"]["path"], "rb").read() == whole,
                  "the picture cut short was never shown, and was fetched again whole")
            if SCREENSHOT:
                page.screenshot(path=SCREENSHOT)

            # Scroll down to row 500 in steps, as a reader would. (No step stops on rows 200-208,
            # whose pictures must still be missing at the end: on a loaded machine a stop can last
            # long enough to count as settled, and the page's server fetches its rows. Serve's own
            # pull, which would turn to such a stop's page, waits until the scroll has settled.)
            home = os.path.join(work, "home")
            store_path = os.path.join(home, "feedsync.sqlite")

            def position():
                with sqlite3.connect(store_path) as store:
                    return store.execute("SELECT scope, page, per_page FROM reading_position "
                                         "ORDER BY updated_at DESC LIMIT 1").fetchone()
            lock = hold_pull_lock(home, page)
            for row in list(range(0, 500, 30)) + [500]:
                page.evaluate(f"document.getElementById('list').scrollTop = {row * ROW}")
                page.wait_for_timeout(30)
            page.wait_for_function("() => document.querySelector('.row[data-row=\"500\"]:not(.loading)') !== null")
            page.wait_for_timeout(300)
            check(len(item_pages) == len(set(item_pages)), f"every page asked for once: {item_pages}")
            check(item_pages == sorted(item_pages), "pages asked for in order")
            check(set(range(1, 12)) <= set(item_pages), "every page up to row 500 and ahead of it was loaded")
            # Every row of the list, in order, each once: the API's numbers 1..601 read back through the page.
            seen = page.evaluate("""async () => {
                const numbers = [];
                for (let p = 1; p <= 13; p++) {
                    const body = await (await fetch('/api/items?page=' + p + '&per_page=50')).json();
                    numbers.push(...body.items.map(i => i.position));
                }
                return numbers; }""")
            check(seen == list(range(1, 602)), "no row missing or twice across the pages")
            drawn = page.evaluate("[...document.querySelectorAll('.row')].map(r => +r.dataset.row)")
            check(len(drawn) == len(set(drawn)), "no row drawn twice")
            wait_until(lambda: position() == ("*", 11, 50), 20, page=page)
            check(position() == ("*", 11, 50), f"the scroll settled on row 500 is the reading position: {position()}")
            lock.close()

            # A pull fetches every picture, one at a time, nearest the reader (row 500) first; the
            # scroll settles on row 300: the position is stored and the pull turns there.
            def pull_holds_lock():
                """Started, and holding the lock (its pid in the lock file); serve's own pull may hold
                it a while: exit 75, started again."""
                nonlocal pull
                if pull is None or pull.poll() == 75:
                    pull = start([feedsync, "pull", "--feed", feed, "--images", "all", "--image-concurrency", "1",
                                  "--quiet"], env)
                return open(os.path.join(home, "pull.lock")).read().strip() == str(pull.pid)
            pull = None
            wait_until(pull_holds_lock, 120, "the separate pull holds the pull lock", page)
            page.wait_for_timeout(1500)
            page.evaluate(f"document.getElementById('list').scrollTop = {300 * ROW}")
            wait_until(lambda: position() == ("*", 7, 50), 20, page=page)
            check(position() == ("*", 7, 50), f"the settled scroll is the reading position: {position()}")
            page.wait_for_timeout(1200)  # the pull re-plans within a second
            seen_before = len(open(log).read().splitlines())

            def pictures_asked():
                return [line for line in open(log).read().splitlines()[seen_before:] if line.startswith("/pictures/")]
            page.wait_for_timeout(1000)
            wait_until(lambda: len(pictures_asked()) >= 8, 10, page=page)  # judged below, with what was asked for
            after = pictures_asked()
            pull_exit = pull.poll()  # None: still running, as it should be (75: it never got the lock)
            pull.terminate()
            pull.wait()
            # Row r of the timeline (the hostile item, undated, is row 0) shows picture 601 - r.
            # The page's server fetches the missing pictures of the rows in view too; a download the
            # pull started before the move may still arrive: most, not all, are around row 300.
            rows_fetched = [601 - int(re.search(r"(\d+)", line).group(1)) for line in after[:8]]
            near = [r for r in rows_fetched if 250 <= r <= 400]
            check(len(rows_fetched) >= 5 and len(near) >= len(rows_fetched) - 1,
                  f"the running pull fetches the pictures around row 300 next: rows {rows_fetched}, "
                  f"the pull's exit then {pull_exit}")
            # Rows in view whose pictures were not cached got them at once, from the page's server.
            thumbs = in_view.replace("img.thumb", ".thumb")
            try:
                page.wait_for_function(
                    f"() => {thumbs}.every(t => t.tagName === 'IMG' && t.complete && t.naturalWidth > 0)", timeout=15000)
            except Exception:
                pass
            shown = page.evaluate(f"{thumbs}.map(t => t.tagName + ' ' + (t.naturalWidth || 0) + ' ' + t.parentElement.dataset.row)")
            check(all(s.startswith("IMG") and not s.startswith("IMG 0") for s in shown),
                  f"every row in view at row 300 shows its picture: {shown}")
            # The separate pull has ended: where the reader stops on rows whose pictures were never
            # fetched, the page's server fetches them at once, and nothing else. The test holds the
            # pull lock meanwhile, so serve's own pull (every 10 s) cannot fetch the window around
            # the new position too (it waits for a round that has begun to end).
            lock = hold_pull_lock(home, page)
            seen_before = len(open(log).read().splitlines())
            page.evaluate(f"document.getElementById('list').scrollTop = {200 * ROW}")
            page.wait_for_function(
                f"() => {thumbs}.every(t => t.tagName === 'IMG' && t.complete && t.naturalWidth > 0)", timeout=15000)
            fetched = sorted(601 - int(re.search(r"(\d+)", line).group(1))
                             for line in open(log).read().splitlines()[seen_before:] if line.startswith("/pictures/"))
            check(set(range(200, 209)) <= set(fetched) and min(fetched) >= 200,
                  f"rows in view fetched their missing pictures at once: {fetched}")
            lock.close()

            # The hostile item: its title is text, its content loses what runs and what is remote.
            page.evaluate("document.getElementById('list').scrollTop = 0")
            page.fill("#search", "onerror")
            page.wait_for_function("() => document.querySelectorAll('.row:not(.loading)').length === 1")
            title = page.inner_text(".row .title")
            check(title == "<img src=x onerror=alert(1)>", f"a title with markup shows as text: {title}")
            page.click(".row")
            frame = page.frame_locator("#content")
            frame.locator("p").first.wait_for()
            html = page.frame(url=re.compile(r".*/content/\d+")).content()
            check("Text stays." in html and "<script" not in html and "<iframe" not in html, "content without script or frame")
            check("example.com/remote.png" not in html and "[picture]" in html, "a remote picture is a placeholder")
            check("javascript:" not in html, "no javascript: link")
            page.wait_for_timeout(300)
            check(dialogs == [], f"no dialog opened: {dialogs}")
            check(outside == [], f"no request left 127.0.0.1: {outside}")
            def close_article():
                """The reader closed and the search cleared: the whole list again."""
                page.keyboard.press("Escape")
                page.fill("#search", "")
                page.wait_for_timeout(500)
            close_article()

            # Articles with pictures inside, stored without them: opening one fetches them at once
            # (from the page's server) and the article shows them without the page reloading.
            Articles.pictures = feed.split("/feed")[0] + "/pictures"
            def retrying(command):
                """`command` run to its end, again while serve's own pull holds the lock (exit 75)."""
                deadline = time.monotonic() + 120
                while True:
                    done = subprocess.run(command, env=env, capture_output=True, text=True)
                    if done.returncode != 75 or time.monotonic() > deadline:
                        return done
                    time.sleep(0.5)
            added = retrying([feedsync, "pull", "--feed", f"http://127.0.0.1:{articles.server_port}/a.xml",
                              "--images", "none", "--quiet"])
            check(added.returncode == 0, "the articles' feed is pulled without pictures")
            show = json.loads(subprocess.run([feedsync, "list", "--json", "--search", "zebrafinch"], env=env,
                                             capture_output=True, text=True, check=True).stdout)
            number = show["items"][0]["number"]
            shown = json.loads(subprocess.run([feedsync, "show", str(number), "--json"], env=env,
                                              capture_output=True, text=True, check=True).stdout)
            stored = shown["pictures"]
            check([p["status"] for p in stored] == ["pending"] * 3, f"three pictures, none cached yet: {stored}")
            check(shown["pic_url"] not in [p["url"] for p in stored],
                  f"the item's own picture, which serve's rounds may fetch, is none of them: {shown['pic_url']}")
            page.evaluate("window.stayed = true")  # gone if the page reloads

            def open_article(words="zebrafinch", pictures=3):
                """Opens the first of the two items `words` finds; the article's HTML once its
                `pictures` pictures have loaded."""
                page.fill("#search", words)
                page.wait_for_function("() => document.querySelectorAll('.row:not(.loading)').length === 2")
                page.click(".row")
                page.wait_for_function("""(count) => {
                    const doc = document.getElementById('content').contentDocument;
                    const images = doc ? [...doc.images] : [];
                    return images.length === count && images.every(i => i.complete && i.naturalWidth > 0); }""",
                    arg=pictures, timeout=15000)
                return page.frame(url=re.compile(r".*/content/\d+")).content()
            html = open_article()
            check(html.count("/pictures/") == 3 and html.count("missing-picture") == 1,
                  "opened online, the article's three pictures arrive; the data: one stays a placeholder")
            meta = page.inner_text("#meta")
            check(re.search(r" · \d{4}-\d\d-\d\d \d\d:\d\d$", meta) is not None, f"the article's date and time: {meta}")
            header, body = page.evaluate("""(() => {
                const left = (element) => element.getBoundingClientRect().left + parseFloat(getComputedStyle(element).paddingLeft);
                const frame = document.getElementById('content');
                return [left(document.getElementById('title')), frame.getBoundingClientRect().left + left(frame.contentDocument.body)];
            })()""")
            check(abs(header - body) < 1.5, f"the article's header lines up with its text ({header} and {body})")
            check(page.evaluate("window.stayed === true"), "without the page reloading")
            check(outside == [], f"no request left 127.0.0.1: {outside}")
            close_article()

            # A feed of teasers with --full-text: each item's page is fetched and its article stored.
            teasers = f"http://127.0.0.1:{articles.server_port}/t.xml"
            added = retrying([feedsync, "add", teasers, "--full-text"])
            check(added.returncode == 0, f"the teasers' feed is added with --full-text: {added.stderr}")

            html = open_article("okapi", 2)
            check("Okapi paragraph 3 of page" in html and "A comment." not in html,
                  "a teaser opens as the whole article from its page, without the page's comments")
            check("<em>Two lines.</em>" in html, "the feed's own summary above it, where it says something else")
            close_article()

            # Offline: the feed server is gone; the page lists, opens and marks.
            demo.terminate()
            demo.wait()
            html = open_article()
            check(html.count("/pictures/") == 3, "offline, the opened article shows every picture from the cache")
            close_article()
            html = open_article("okapi", 2)
            check("Okapi paragraph 3 of page" in html and html.count("/pictures/") == 2,
                  "offline, the teaser's whole article reads with its pictures from the cache")
            check(outside == [], f"no request left 127.0.0.1: {outside}")
            close_article()

            def unread():
                """The unread view, loaded afresh: its count."""
                page.click("#all")
                page.click("#unread")
                page.wait_for_selector(".row:not(.loading)")
                return int(page.inner_text("#count").split()[0])
            before = unread()
            page.keyboard.press("j")
            page.keyboard.press("o")
            page.wait_for_selector("#reader:not([hidden])")
            page.wait_for_selector(".row.current.read")  # the mark stored
            page.keyboard.press("Escape")
            after = unread()
            check(after == before - 1, f"with the feed server stopped, opening an item marks it read ({before} → {after})")
            page.keyboard.press("j")
            page.wait_for_selector(".row.current")
            page.keyboard.press("m")
            page.wait_for_selector(".row.current.read")
            check(unread() == after - 1, "m marks the current row read")

            # A star from the page reaches the store, the starred view lists it, and it comes off.
            def starred_items():
                out = subprocess.run([feedsync, "list", "--starred", "--json"], env=env, capture_output=True,
                                     text=True, check=True).stdout
                return [item["title"] for item in json.loads(out)["items"]]
            page.click("#all")
            page.wait_for_selector(".row:not(.loading)")
            page.keyboard.press("j")
            page.wait_for_selector(".row.current")
            chosen = page.inner_text(".row.current .title")
            page.keyboard.press("s")
            page.wait_for_function("() => document.querySelector('.row.current .meta').textContent.startsWith('★')")
            check(starred_items() == [chosen], f"s stars the current row in the store: {starred_items()}")
            page.click("#starred")
            page.wait_for_function("() => document.getElementById('count').textContent === '1 item'")
            page.wait_for_selector(".row:not(.loading)")
            check(page.inner_text(".row[data-row='0'] .title") == chosen, "the starred view lists it")
            page.click(".row[data-row='0']")
            page.wait_for_selector("#reader:not([hidden])")
            check(page.inner_text("#star") == "Unstar", "an open starred item offers to unstar it")
            page.click("#star")
            page.wait_for_function("() => document.getElementById('star').textContent === 'Star'")
            check(starred_items() == [], "unstarring from the page reaches the store")
            page.keyboard.press("Escape")
            page.click("#all")
            page.select_option("#feed", label="Hundreds (6)")
            page.wait_for_function("() => document.getElementById('count').textContent === '6 items'")
            check(page.inner_text(".row[data-row='0'] .title") == "Item 600", "choosing a view lists its items")
            page.select_option("#feed", index=0)

            # New items from serve's own pull in the background: a bar, and the rows in view stay.
            page.click("#all")
            page.wait_for_selector(".row:not(.loading)")
            first = page.inner_text(".row[data-row='0'] .title")
            top = page.evaluate("document.querySelector('.row[data-row=\"0\"]').getBoundingClientRect().top")
            demo2 = start([os.path.join(BIN, "feedsync-demo-server"), "--items", "610", "--per-page", "50",
                           "--port", feed.split(":")[2].split("/")[0]], env)

            def answers():
                try:
                    with urllib.request.urlopen(feed, timeout=5):
                        return True
                except OSError:
                    return False
            wait_until(answers, 60, "the demo server answers again", page)
            with sqlite3.connect(store_path) as store:
                store.execute("UPDATE feed SET due_at = 0")  # due now: the next round (10 s) asks it
            # Serve's next round (after the one running ends) stores them; the page sees them at
            # its next look (every 15 s).
            page.wait_for_selector("#new:not([hidden])", timeout=90000)
            check(page.inner_text("#new") == "10 new items", f"the bar says so: {page.inner_text('#new')}")
            check(page.inner_text(".row[data-row='0'] .title") == first, "what the reader sees did not move")
            moved = page.evaluate("document.querySelector('.row[data-row=\"0\"]').getBoundingClientRect().top")
            check(moved == top, f"the offer floats over the list: row 0 stays at {top} px ({moved})")
            # Rows fetched after the new items arrived continue the list as it was: row r is still
            # item 601 - r (the new items are above it until the bar is clicked).
            page.evaluate(f"document.getElementById('list').scrollTop = {200 * ROW}")
            page.wait_for_selector(".row[data-row='200']:not(.loading)")
            page.wait_for_timeout(500)  # the pages around it drawn
            titles = [page.inner_text(f".row[data-row='{r}'] .title") for r in (199, 200, 201)]
            check(titles == ["Item 402", "Item 401", "Item 400"], f"rows fetched later keep their places: {titles}")
            demo2.terminate()

            # A phone-width screen: every control of the bar on it, none clipped.
            page.set_viewport_size({"width": 360, "height": 740})
            page.wait_for_timeout(200)
            right = page.evaluate("Math.max(...[...document.querySelectorAll('#bar > *')].map(e => e.getBoundingClientRect().right))")
            check(right <= 360, f"at 360 px the bar's controls fit ({right} px)")
            browser.close()
    finally:
        for process in (serve, demo):
            if process and process.poll() is None:
                process.terminate()
        hostile.shutdown()
        articles.shutdown()
        shutil.rmtree(work, ignore_errors=True)
    print("browser tests passed")


if __name__ == "__main__":
    main()
