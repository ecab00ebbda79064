#!/usr/bin/env python3
"""Drives `feedsync read` in a pseudo-terminal of a known size and reads its screen through pyte,
a kept terminal emulator: the end-to-end checks of the terminal reader. Each scenario is run by a
Swift test (ReaderEndToEndTests), which makes the store first and passes what it made:

    reader.py SCENARIO --binary FEEDSYNC [--log SERVER_LOG] [--items N] ...

FEEDSYNC_HOME comes from the environment. A failed check prints one line and exits 1."""

import argparse
import base64
import fcntl
import json
import os
import re
import select
import signal
import struct
import subprocess
import sys
import termios
import time
import zlib

import pyte

# What pyte cannot take: kitty's APC and sixel's DCS (it would print their payloads as text),
# iTerm2's OSC 1337. Cut out before the screen sees them, and kept to check.
GRAPHICS = re.compile(rb"\x1b_G.*?\x1b\\|\x1bP.*?\x1b\\|\x1b\]1337;.*?(?:\x07|\x1b\\)", re.S)


class Failed(Exception):
    pass


def check(condition, message):
    if not condition:
        raise Failed(message)


# What a shell does for a job, as small as it can be: the command in a process group of its own in
# the foreground; when it stops, the terminal taken back and "[stopped]" said; on SIGUSR1 (fg), the
# terminal given back and the group continued; the command's status at its end.
JOB_SHELL = """
import os, signal, sys
signal.signal(signal.SIGTTOU, signal.SIG_IGN)
signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGUSR1])
pid = os.fork()
if pid == 0:
    os.setpgid(0, 0)
    os.tcsetpgrp(0, os.getpid())
    signal.signal(signal.SIGTTOU, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGUSR1])
    os.execvp(sys.argv[1], sys.argv[1:])
os.setpgid(pid, pid)
os.tcsetpgrp(0, pid)
while True:
    _, status = os.waitpid(pid, os.WUNTRACED)
    if not os.WIFSTOPPED(status):
        sys.exit(os.waitstatus_to_exitcode(status))
    os.tcsetpgrp(0, os.getpgrp())
    os.write(1, b"[stopped]\\r\\n")
    signal.sigwait([signal.SIGUSR1])
    os.tcsetpgrp(0, pid)
    os.killpg(pid, signal.SIGCONT)
"""


class Terminal:
    """The reader in a pseudo-terminal of `columns` × `rows` cells (of 8 × 16 pixels)."""

    def __init__(self, binary, args, columns=80, rows=24, env=None, answer=None, shell=False, inside=()):
        self.master, self.slave = os.openpty()
        self.size(columns, rows)
        environment = dict(os.environ, TERM="xterm-256color", COLORTERM="truecolor", **(env or {}))
        environment.pop("TMUX", None)
        # With `shell`, the reader is a job of JOB_SHELL's, which can stop and continue it.
        command = [*inside, binary, "read", *args]
        if shell:
            command = [sys.executable, "-c", JOB_SHELL, *command]
        self.process = subprocess.Popen(
            command, stdin=self.slave, stdout=self.slave, stderr=self.slave,
            env=environment, start_new_session=True,
            preexec_fn=lambda: fcntl.ioctl(0, termios.TIOCSCTTY, 0))
        self.screen = pyte.Screen(columns, rows)
        self.stream = pyte.ByteStream(self.screen)
        self.raw = bytearray()
        self.answer = answer
        self.pending = b""

    def size(self, columns, rows):
        fcntl.ioctl(self.master, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, columns * 8, rows * 16))

    def resize(self, columns, rows):
        self.size(columns, rows)
        self.screen.resize(rows, columns)

    def pump(self, seconds):
        """Reads what the reader writes for `seconds`."""
        end = time.monotonic() + seconds
        while True:
            left = end - time.monotonic()
            if left <= 0:
                return
            ready, _, _ = select.select([self.master], [], [], left)
            if not ready:
                return
            try:
                data = os.read(self.master, 1 << 16)
            except OSError:
                return
            if not data:
                return
            self.raw += data
            if self.answer:
                self.answer(self, data)
            # A graphics sequence cut between two reads waits for its end.
            data = self.pending + data
            cut = max(data.rfind(b"\x1b_G"), data.rfind(b"\x1bP"), data.rfind(b"\x1b]1337"))
            if cut >= 0 and not GRAPHICS.match(data, cut):
                self.pending, data = data[cut:], data[:cut]
            else:
                self.pending = b""
            self.stream.feed(GRAPHICS.sub(b"", data))

    def send(self, keys, settle=0.05):
        os.write(self.master, keys.encode() if isinstance(keys, str) else keys)
        self.pump(settle)

    def lines(self):
        return [line.rstrip() for line in self.screen.display]

    def text(self):
        return "\n".join(self.lines())

    def wait(self, condition, what, timeout=10):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if condition(self):
                return
            self.pump(0.05)
        raise Failed(f"{what}; the screen:\n{self.text()}")

    def wait_text(self, text, timeout=10):
        self.wait(lambda t: text in t.text(), f"{text!r} never showed", timeout)

    def status(self):
        return self.lines()[-1]

    def exit(self, timeout=10):
        try:
            status = self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            raise Failed("the reader did not end")
        self.pump(0.1)
        return status

    def cooked(self):
        """Whether the terminal is back in the mode it was given in: a line at a time, echoed."""
        attributes = termios.tcgetattr(self.slave)
        stty = subprocess.run(["stty", "-a"], stdin=self.slave, capture_output=True, text=True).stdout
        return bool(attributes[3] & termios.ICANON and attributes[3] & termios.ECHO), stty

    def close(self):
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        os.close(self.master)
        os.close(self.slave)


def titles(terminal):
    """The titles of the list's rows on screen, top down (each row's second line: its first names
    the feed and the date; a picture still loading shows ··· in its box beside the title)."""
    found = []
    for line in terminal.lines()[1:-1]:
        match = re.search(r"(Item \d+)\s*$", line)
        if match and not re.search(r"\d{4}-\d{2}-\d{2}", line):
            found.append(match.group(1))
    return found


def numbers(terminal):
    return [int(title.split()[1]) for title in titles(terminal)]


def feedsync(binary, *args):
    result = subprocess.run([binary, *args], capture_output=True, text=True)
    check(result.returncode == 0, f"feedsync {' '.join(args)} failed: {result.stderr}")
    return result.stdout


def listed(binary):
    items = []
    for page in range(1, 1000):
        answer = json.loads(feedsync(binary, "list", "--json", "--per-page", "500", "--page", str(page)))
        items += answer["items"]
        if len(answer["items"]) < 500:
            return items


def png_pixels(data):
    """An 8-bit RGB or RGBA PNG's width, height and pixels as (r, g, b) tuples, rows top down."""
    check(data[:8] == b"\x89PNG\r\n\x1a\n", "a PNG")
    at, chunks, header = 8, b"", None
    while at < len(data):
        length, kind = struct.unpack(">I4s", data[at:at + 8])
        body = data[at + 8:at + 8 + length]
        at += 12 + length
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            chunks += body
        elif kind == b"IEND":
            break
    width, height, depth, colour = header[:4]
    check(depth == 8 and colour in (2, 6), f"an 8-bit RGB(A) PNG: {header}")
    size = 3 if colour == 2 else 4
    raw = zlib.decompress(chunks)
    stride = width * size
    rows, previous = [], bytearray(stride)
    for y in range(height):
        kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for x in range(stride):
            a = line[x - size] if x >= size else 0
            b, c = previous[x], previous[x - size] if x >= size else 0
            if kind == 1:
                line[x] = (line[x] + a) & 255
            elif kind == 2:
                line[x] = (line[x] + b) & 255
            elif kind == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(line)
        previous = line
    return width, height, [tuple(row[x * size:x * size + 3]) for row in rows for x in range(width)]


def near(colour, expected, tolerance=24):
    return all(abs(a - b) <= tolerance for a, b in zip(colour, expected))


def first_row_picture(binary):
    """The newest item and its cached picture's colour (the demo server's are one pixel)."""
    item = listed(binary)[0]
    check(item["image"]["status"] == "cached", f"the first item's picture is cached: {item}")
    return item, png_pixels(open(item["image"]["path"], "rb").read())[2][0]


# MARK: Scenarios


def basics(options):
    """The first frame, the keys and what the store says after them."""
    opened = os.path.join(os.environ["FEEDSYNC_HOME"], "opened")
    browser = opened + ".sh"
    with open(browser, "w") as file:
        file.write(f'#!/bin/sh\necho "$1" "${{FEEDSYNC_PASSWORD:-no password}}" >> {opened}\n')
    os.chmod(browser, 0o755)
    terminal = Terminal(options.binary, ["--pictures", "none"], env={"BROWSER": browser, "FEEDSYNC_PASSWORD": "s3cret"})
    try:
        terminal.wait_text(f"1 of {options.items}")
        check(numbers(terminal)[:3] == [options.items, options.items - 1, options.items - 2],
              f"the first frame shows the newest rows first: {titles(terminal)}")
        check(terminal.lines()[0].startswith(" feedsync · all feeds"), f"the header: {terminal.lines()[0]!r}")
        terminal.send("jj")
        terminal.wait_text(f"3 of {options.items}")
        # Enter reads the item, marking it read; q goes back.
        terminal.send("\r")
        top = options.items - 2
        terminal.wait(lambda t: t.lines()[1].strip() == f"Item {top}", "Enter shows the item's title")
        check(f"/items/{top}" in terminal.text(), "the item's link shows")
        terminal.send("q")
        terminal.wait_text(f"3 of {options.items}")
        # o opens the row's link with $BROWSER, then the list is drawn again.
        terminal.send("o")
        terminal.wait_text("opened http://")
        check(open(opened).read().strip().endswith(f"/items/{top} no password"),
              f"o gave $BROWSER the link and not the password: {open(opened).read()!r}")
        check(f"Item {top}" in titles(terminal), "the list is back after the browser")
        read = {item["title"]: item for item in listed(options.binary)}
        check(read[f"Item {top}"]["unread"] is False, "the item opened is read in the store")
        # m marks unread again, s stars.
        terminal.send("m")
        terminal.send("s")
        terminal.pump(0.3)
        state = {item["title"]: item for item in listed(options.binary)}[f"Item {top}"]
        check(state["unread"] is True and state["starred"] is True, f"m and s reached the store: {state}")
        terminal.send("k")
        terminal.send("m")  # the second row is read now
        terminal.pump(0.2)
        # u: unread only; the row just marked read is gone from it.
        terminal.send("u")
        terminal.wait_text("unread items only")
        shown = numbers(terminal)
        check(options.items - 1 not in shown and options.items in shown, f"u shows unread items only: {shown}")
        terminal.send("u")
        terminal.wait_text("all items")
        # / searches (a word or a word's start: no other item's number starts with this one).
        wanted = options.items - 5
        terminal.send(f"/Item {wanted}")
        terminal.wait(lambda t: f"search: Item {wanted}" in t.status(), "the search prompt")
        terminal.send("\r")
        terminal.wait_text(f"search: Item {wanted}")
        check(numbers(terminal) == [wanted], f"the search finds the one item: {titles(terminal)}")
        terminal.send("\x1b")
        terminal.wait_text("search cleared")
        # f: the feeds with their unread counts, then the saved views with theirs; Enter shows one.
        feedsync(options.binary, "view", "add", "Fives", 'title ~ "5$"')
        terminal.send("f")
        terminal.wait_text("feeds and folders")
        items = listed(options.binary)
        unread = sum(1 for item in items if item["unread"])
        check(f"{unread} unread" in terminal.text(), f"the chooser shows the unread count {unread}")
        five_unread = sum(1 for item in items if item["title"].endswith("5") and item["unread"])
        line = next((line for line in terminal.lines() if "view: Fives" in line), "")
        check(f"{five_unread} unread" in line, f"the chooser shows the view with its unread count: {line!r}")
        terminal.send("jj\r")
        terminal.wait(lambda t: "feeds and folders" not in t.text() and numbers(t), "Enter shows the view")
        check(numbers(terminal)[:3] == sorted(
            [int(item["title"].split()[1]) for item in items if item["title"].endswith("5")], reverse=True)[:3],
            f"the view lists its items: {titles(terminal)}")
        feedsync(options.binary, "view", "remove", "Fives")
        terminal.send("f")
        terminal.wait_text("feeds and folders")
        terminal.send("j\r")
        terminal.wait(lambda t: "feeds and folders" not in t.text() and numbers(t), "Enter shows the feed")
        # ? shows the keys and the pictures' way.
        terminal.send("?")
        terminal.wait_text("pictures: none (as asked)")
        terminal.send("x")
        terminal.send("q")
        check(terminal.exit() == 0, "q quits with 0")
        cooked, stty = terminal.cooked()
        check(cooked, f"the terminal is given back cooked: {stty}")
        check(terminal.raw.endswith(b"\x1b[?1049l"), "the main screen is back at the end")
    finally:
        terminal.close()


def million(options):
    """G on a million items shows the oldest; the status line knows the length from the start."""
    terminal = Terminal(options.binary, ["--pictures", "none"])
    try:
        terminal.wait_text(f"1 of {options.items}")
        check(numbers(terminal)[0] == options.items, f"the newest first: {titles(terminal)}")
        terminal.send("G")
        terminal.wait_text(f"{options.items} of {options.items}")
        check(numbers(terminal)[-1] == 1, f"G shows the oldest: {titles(terminal)}")
        terminal.send("k")
        terminal.wait_text(f"{options.items - 1} of {options.items}")
        terminal.send("g")
        terminal.wait_text(f"1 of {options.items}")
        check(numbers(terminal)[0] == options.items, "g goes back to the newest")
        # 5 000 rows a screen at a time, then back a row at a time for a screen: every item once,
        # in order.
        seen = numbers(terminal)
        while len(seen) < 5000:
            terminal.send(" ", settle=0)
            before = terminal.status()
            terminal.wait(lambda t: t.status() != before, "Space moves down a screen", timeout=5)
            terminal.pump(0.01)
            shown = numbers(terminal)
            check(shown and shown[0] <= seen[-1] + 1, f"no row skipped: {seen[-1]} then {shown[:2]}")
            seen += [number for number in shown if number < seen[-1]]
        check(seen[:5000] == list(range(options.items, options.items - 5000, -1)),
              "scrolling 5 000 rows shows each item once, in order")
        for _ in range(40):
            terminal.send("k", settle=0)
        terminal.pump(0.3)
        check(terminal.screen.cursor is not None, "still drawing")
        terminal.send("q")
        check(terminal.exit() == 0, "q quits")
    finally:
        terminal.close()


def fresh(options):
    """A pull that lands while reading: an "N new" line at the top, the rows not moved until g."""
    terminal = Terminal(options.binary, ["--pictures", "none"])
    try:
        terminal.wait_text(f"1 of {options.items}")
        terminal.send("jjj")
        terminal.wait_text(f"4 of {options.items}")
        before = terminal.lines()[1:-1]
        feedsync(options.binary, "pull", "--force", "--images", "none")
        terminal.wait_text(f"{options.added} new", timeout=5)
        check(terminal.lines()[1:-1] == before, "the rows did not move")
        check(f"{options.added} new" in terminal.lines()[0], "the new items are said at the top")
        terminal.send("g")
        terminal.wait(lambda t: numbers(t) and numbers(t)[0] == options.items + options.added, "g shows them")
        check(f"1 of {options.items + options.added}" in terminal.status(), "and counts them")
        # A resize redraws at the new size at once.
        terminal.resize(100, 30)
        terminal.wait(lambda t: len(t.lines()) == 30 and "? keys" in t.lines()[29], "the resize redraws")
        check(len(titles(terminal)) == 14, f"14 rows in 30 lines: {titles(terminal)}")
        terminal.send("q")
        check(terminal.exit() == 0, "q quits")
    finally:
        terminal.close()


def ending(options):
    """SIGTERM, SIGHUP and crashes give the terminal back cooked, the main screen back."""
    for name in ["SIGTERM", "SIGHUP", "SIGSEGV", "SIGABRT", "SIGILL"]:
        # Without the Swift runtime's own crash handler (a debug build's; the installed binary,
        # linked statically, has none), which would wait on its backtracer.
        terminal = Terminal(options.binary, ["--pictures", "none"], env={"SWIFT_BACKTRACE": "enable=no"})
        try:
            terminal.wait_text(f"1 of {options.items}")
            number = getattr(signal, name)
            terminal.process.send_signal(number)
            status = terminal.exit()
            check(status == -number, f"{name}: the reader ends of it ({status})")
            cooked, stty = terminal.cooked()
            check(cooked, f"{name}: the terminal is given back cooked: {stty}")
            tail = bytes(terminal.raw[-80:])
            check(b"\x1b[?1049l" in tail and b"\x1b[?25h" in tail, f"{name}: the main screen and cursor back: {tail!r}")
        finally:
            terminal.close()


def stopping(options):
    """Ctrl-Z stops the reader with the terminal given back; fg takes it again and redraws."""
    terminal = Terminal(options.binary, ["--pictures", "none"], shell=True)
    try:
        terminal.wait_text(f"1 of {options.items}")
        terminal.send("jj")
        terminal.wait_text(f"3 of {options.items}")
        terminal.send("\x1a")
        terminal.wait_text("[stopped]")
        cooked, stty = terminal.cooked()
        check(cooked, f"stopped, the terminal is given back cooked: {stty}")
        check(b"\x1b[?1049l" in terminal.raw[-200:], "stopped, the main screen is back")
        terminal.screen.reset()
        terminal.process.send_signal(signal.SIGUSR1)  # fg
        terminal.wait(lambda t: f"3 of {options.items}" in t.status() and numbers(t), "fg redraws where it was")
        check(not terminal.cooked()[0], "continued, the terminal is the reader's again")
        terminal.send("j")
        terminal.wait_text(f"4 of {options.items}")
        terminal.send("q")
        check(terminal.exit() == 0, "q quits with 0 after fg")
        check(terminal.cooked()[0], "and gives the terminal back cooked")
    finally:
        terminal.close()


def inside_tmux(options):
    """Inside tmux the reader asks the terminal outside through it: a kitty there is drawn to
    through tmux, anything else (or passthrough off) gets half blocks; q leaves tmux's pane."""
    def kitty(terminal, data):
        if b"_Gi=31," in data:
            os.write(terminal.master, b"\x1b_Gi=31;OK\x1b\\")
        if b"\x1b[c" in data:
            os.write(terminal.master, b"\x1b[?62;22c")
    socket = os.path.join(os.environ["FEEDSYNC_HOME"], "tmux")
    for passthrough, expected in [("off", "blocks"), ("on", "kitty")]:
        with open(socket + ".conf", "w") as file:
            file.write(f"set -g allow-passthrough {passthrough}\nset -g status off\n")
        tmux = ["tmux", "-S", socket, "-f", socket + ".conf", "new-session"]
        terminal = Terminal(options.binary, [], answer=kitty, inside=tmux)
        try:
            terminal.wait_text(f"1 of {options.items}")
            terminal.pump(1)  # the answers, or half a second without them
            # On a loaded machine the answer through tmux can come after the half second: the
            # reader still takes it when it comes (late), so the keys ask again for a while.
            deadline = time.monotonic() + 15
            while True:
                terminal.send("?")
                terminal.wait_text("pictures: ")
                line = next(line for line in terminal.lines() if "pictures: " in line)
                if f"pictures: {expected} (" in line or time.monotonic() > deadline:
                    break
                terminal.send("x")
                terminal.pump(0.5)
            check("asking" not in line, f"passthrough {passthrough}: the answer or its absence decided: {line.strip()}")
            check(f"pictures: {expected} (" in line, f"passthrough {passthrough}: {line.strip()}")
            if expected == "kitty":
                check(b"\x1b_Ga=T," in terminal.raw or b"\x1b_Ga=t," in terminal.raw, "kitty's pictures reach the terminal outside")
            terminal.send("x")
            terminal.send("q")
            check(terminal.exit() == 0, f"passthrough {passthrough}: q leaves the pane and tmux ends")
        finally:
            terminal.close()
            subprocess.run(["tmux", "-S", socket, "kill-server"], capture_output=True)


def hostile(options):
    """A title full of escape sequences shows as text; none of them reaches the terminal."""
    terminal = Terminal(options.binary, ["--pictures", "none"])
    try:
        terminal.wait_text("1 of")
        terminal.send("\r")
        terminal.pump(0.5)
        raw = bytes(terminal.raw)
        for sequence in [b"\x1b]0;", b"\x1b[31m", b"\x1b[2J\x1b[H\x1b[31", b"\x9b", b"\x1b]8;", b"\x07"]:
            check(sequence not in raw.replace(b"\x1b[2J", b""), f"{sequence!r} reached the terminal")
        check("pwned" in terminal.text(), f"the title shows as text: {terminal.text()}")
        terminal.send("q")
        terminal.send("q")
        check(terminal.exit() == 0, "q quits")
    finally:
        terminal.close()


def pictures(options):
    """A row's thumbnail in each protocol, read back from the bytes written: kitty's RGBA, iTerm2's
    PNG, sixel through libsixel's own decoder, each the cached picture's pixels at the box's size
    (6 × 2 cells of 8 × 16 pixels), placed at the row's first cell."""
    item, colour = first_row_picture(options.binary)
    for kind in ["kitty", "iterm", "sixel"]:
        terminal = Terminal(options.binary, ["--pictures", kind])
        try:
            terminal.wait_text("1 of")
            starts = {"kitty": b"\x1b[2;1H\x1b_Ga=T,", "iterm": b"\x1b[2;1H\x1b]1337;File=", "sixel": b"\x1b[2;1H\x1bP"}
            terminal.wait(lambda t: starts[kind] in t.raw, f"{kind}: the first row's picture is drawn at its cell")
            terminal.pump(0.3)
            raw = bytes(terminal.raw)
            at = raw.index(starts[kind]) + len(b"\x1b[2;1H")
            if kind == "kitty":
                payload, keys = b"", None
                for match in re.finditer(rb"\x1b_G([^;\x1b]*)(?:;([A-Za-z0-9+/=]*))?\x1b\\", raw[at:]):
                    fields = dict(pair.split(b"=") for pair in match.group(1).split(b","))
                    keys = keys or fields
                    payload += base64.b64decode(match.group(2) or b"")
                    if fields.get(b"m") == b"0":
                        break
                check(keys[b"s"] == b"48" and keys[b"v"] == b"32" and keys[b"c"] == b"6" and keys[b"r"] == b"2",
                      f"kitty: 48 × 32 pixels in 6 × 2 cells: {keys}")
                check(keys[b"C"] == b"1" and keys[b"q"] == b"2", "kitty: the cursor not moved, no answers")
                check(len(payload) == 48 * 32 * 4, f"kitty: RGBA of 48 × 32 ({len(payload)} bytes)")
                shown = [tuple(payload[i:i + 3]) for i in range(0, len(payload), 4)]
            elif kind == "iterm":
                end = raw.index(b"\x07", at)
                arguments, data = raw[at + len(b"\x1b]1337;File="):end].split(b":", 1)
                check(b"inline=1" in arguments and b"width=6" in arguments and b"height=2" in arguments,
                      f"iterm: inline in 6 × 2 cells: {arguments}")
                width, height, shown = png_pixels(base64.b64decode(data))
                check((width, height) == (48, 32), f"iterm: 48 × 32 pixels ({width} × {height})")
            else:
                end = raw.index(b"\x1b\\", at) + 2
                decoded = subprocess.run(["sixel2png"], input=raw[at:end], capture_output=True).stdout
                width, height, shown = png_pixels(decoded)
                check((width, height) == (48, 32), f"sixel: 48 × 32 pixels ({width} × {height})")
            check(all(near(pixel, colour) for pixel in shown), f"{kind}: every pixel is the picture's {colour}")
            terminal.send("q")
            check(terminal.exit() == 0, f"{kind}: q quits")
            if kind == "kitty":
                check(b"\x1b_Ga=d,d=A,q=2\x1b\\" in bytes(terminal.raw[-200:]), "kitty: the pictures freed at the end")
        finally:
            terminal.close()


def fling(options):
    """Keys held faster than the settle time: nothing is asked for the rows passing by; where the
    cursor rests, the rows in view get their pictures, asked of the prefetcher at once."""
    items = listed(options.binary)
    check(all(item["image"]["status"] == "pending" for item in items), "no picture cached yet")
    url = {item["title"]: item["pic_url"].split("/pictures/")[1] for item in items}
    asked = lambda: [line.split("/pictures/")[1].strip() for line in open(options.log) if "/pictures/" in line]
    terminal = Terminal(options.binary, ["--pictures", "kitty"])
    try:
        terminal.wait(lambda t: len(titles(t)) == 11, "the first screen")
        first = [url[title] for title in titles(terminal)]
        terminal.wait(lambda t: set(first) <= set(asked()), f"the first screen's pictures are asked: {asked()}")
        terminal.pump(0.5)
        check(sorted(asked()) == sorted(first), f"only the first screen's: {asked()}")
        before = len(asked())
        # 60 rows down, a key every 40 ms (a key held), then rest: written on time, the screen
        # read after (reading it between keys could, on a loaded machine, leave a gap as long
        # as a rest).
        for _ in range(60):
            os.write(terminal.master, b"j")
            time.sleep(0.04)
        terminal.wait_text("61 of")
        terminal.pump(1.0)
        rested = [url[title] for title in titles(terminal)]
        later = asked()[before:]
        check(set(later) == set(rested) - set(first),
              f"only the rows where the cursor rested were asked: {later}, in view {rested}")
        terminal.wait(lambda t: t.raw.count(b"\x1b_Ga=T,") >= len(first) + len(set(rested) - set(first)),
                      "their pictures are drawn")
        terminal.send("q")
        check(terminal.exit() == 0, "q quits")
    finally:
        terminal.close()


def hostile_pictures(options):
    """Cached files that only start like pictures, or claim more pixels than allowed: the box
    shows ×, within a bounded time, and nothing is drawn for them."""
    terminal = Terminal(options.binary, ["--pictures", "kitty"])
    try:
        started = time.monotonic()
        terminal.wait_text("1 of")
        terminal.wait(lambda t: t.text().count("×") >= options.added, f"{options.added} boxes say ×", timeout=3)
        check(time.monotonic() - started < 2, "decided within two seconds")
        terminal.wait(lambda t: b"\x1b_Ga=T," in t.raw, "the other rows' pictures are drawn")
        for row in range(options.added):
            check(f"\x1b[{2 + 2 * row};1H\x1b_G".encode() not in terminal.raw, f"nothing drawn in row {row + 1}'s box")
        terminal.send("q")
        check(terminal.exit() == 0, "q quits")
    finally:
        terminal.close()


# xterm's "fixed" at 6 × 13, with all of Unicode's characters it has (xfonts-base).
FONT = "-misc-fixed-medium-r-semicondensed--13-120-75-75-c-60-iso10646-1"


def xterm(options):
    """One real terminal that shows pictures: Debian's xterm as a VT340 (sixel) under Xvfb, the
    reader choosing sixel by asking it, each of the first rows' cached pictures at its box's
    cells on a screenshot's pixels."""
    items = listed(options.binary)[:3]
    colours = [png_pixels(open(item["image"]["path"], "rb").read())[2][0] for item in items]
    read, write = os.pipe()
    said = open(os.path.join(os.environ["FEEDSYNC_HOME"], "x.err"), "w+")
    server = subprocess.Popen(["Xvfb", "-displayfd", str(write), "-screen", "0", "640x400x24", "-nolisten", "tcp"],
                              pass_fds=[write], stderr=said)
    os.close(write)
    # Xvfb writes the number, then its newline: closed before the newline, the pipe kills the
    # server (EPIPE), which a loaded machine's scheduling made happen.
    number = b""
    while not number.endswith(b"\n"):
        chunk = os.read(read, 64)
        check(chunk, f"Xvfb gave no display number: {open(said.name, errors='replace').read()[-300:]!r}")
        number += chunk
    display = ":" + number.decode().strip()
    os.close(read)
    script = os.path.join(os.environ["FEEDSYNC_HOME"], "read.sh")
    with open(script, "w") as file:
        file.write(f"#!/bin/sh\nexec {options.binary} read 2>{script}.err\n")
    os.chmod(script, 0o755)
    environment = dict(os.environ, DISPLAY=display)
    for name in ["TMUX", "COLORTERM", "TERM_PROGRAM", "KITTY_WINDOW_ID"]:
        environment.pop(name, None)
    terminal = subprocess.Popen(
        ["xterm", "-ti", "vt340", "-xrm", "XTerm*numColorRegisters: 256", "-fn", FONT, "-geometry", "80x24+0+0",
         "-e", script], env=environment, stderr=said)

    def ppm():
        dump = subprocess.run(["xwd", "-root", "-silent", "-display", display], capture_output=True).stdout
        return subprocess.run(["xwdtopnm"], input=dump, capture_output=True).stdout

    def screenshot():
        """The screen's pixels, or None while the display cannot be read (a loaded machine)."""
        image = ppm()
        header = re.match(rb"P6\s+(\d+)\s+(\d+)\s+255\s", image)
        if not header:
            return None
        width = int(header.group(1))
        pixels = image[header.end():]
        return lambda x, y: tuple(pixels[(y * width + x) * 3:(y * width + x) * 3 + 3])

    # The font's cells are 6 × 13 pixels, the text from (2, 2) inside its border; a row's
    # box is its first 6 cells over its 2 lines: list row k (from 0) at screen lines 1 + 2k, 2 + 2k.
    def box(pixel, row):
        top, left = 2 + (1 + 2 * row) * 13, 2
        return [pixel(x, y) for y in range(top + 3, top + 2 * 13 - 3) for x in range(left + 3, left + 6 * 6 - 3)]

    try:
        end = time.monotonic() + 60  # a loaded machine starts X, xterm and the reader slowly
        while True:
            pixel = screenshot()
            shares = [sum(near(p, colour, 40) for p in box(pixel, row)) / len(box(pixel, row))
                      for row, colour in enumerate(colours)] if pixel else [0] * len(colours)
            if all(share > 0.9 for share in shares):
                break
            if time.monotonic() > end:
                reader = open(script + ".err", errors="replace").read()[-300:] if os.path.exists(script + ".err") else ""
                check(False, "each of the first rows' boxes shows its picture on xterm's screen: "
                      + ", ".join(f"row {row + 1} {share:.0%} of it" for row, share in enumerate(shares))
                      + f"; Xvfb and xterm said {open(said.name, errors='replace').read()[-300:]!r}"
                      + f", the reader {reader!r}")
            time.sleep(0.3)
        # Beside the box, the row's text: not the picture.
        beside = [pixel(x, y) for y in range(2 + 13 + 3, 2 + 2 * 13 - 3) for x in range(2 + 6 * 6 + 2, 2 + 6 * 6 + 5)]
        check(sum(near(p, colours[0], 40) for p in beside) < len(beside) / 2, "the picture stays in its box")
        if options.screenshot:
            cut = subprocess.run(["pnmcut", "0", "0", "486", "318"], input=ppm(), capture_output=True).stdout
            open(options.screenshot, "wb").write(subprocess.run(["pnmtopng"], input=cut, capture_output=True).stdout)
    finally:
        for process in (terminal, server):
            process.terminate()
            try:
                process.wait(5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        said.close()


def not_a_terminal(options):
    result = subprocess.run([options.binary, "read"], stdin=subprocess.DEVNULL, capture_output=True, text=True)
    check(result.returncode == 64, f"read on a pipe exits 64 ({result.returncode})")
    check("use feedsync list" in result.stderr and result.stderr.count("\n") == 1, f"one sentence: {result.stderr!r}")


def main():
    # The test runner starts us with most signals blocked, which every child would inherit: an
    # Xvfb or xterm that cannot be terminated, a reader deaf to SIGWINCH.
    signal.pthread_sigmask(signal.SIG_SETMASK, [])
    parser = argparse.ArgumentParser()
    parser.add_argument("scenario")
    parser.add_argument("--binary", required=True)
    parser.add_argument("--items", type=int, default=0)
    parser.add_argument("--added", type=int, default=0)
    parser.add_argument("--log", default="")
    parser.add_argument("--screenshot", default="")
    options = parser.parse_args()
    scenario = globals()[options.scenario.replace("-", "_")]
    try:
        scenario(options)
    except Failed as failure:
        print(f"{options.scenario}: {failure}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
