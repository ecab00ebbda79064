"use strict";
// The reading page. An endless list over /api/items drawn as a virtual list of rows of one height:
// the total is known from the first page, so the scrollbar is honest from the start; each page of
// rows is fetched once, as it comes near the viewport; thumbnails sit in boxes of a fixed size, so
// nothing shifts when they arrive. Where scrolling settles (not while it flings) the first visible
// row is reported as the reading position, which the picture prefetch of every pull follows.
(() => {
  const ROW = 88, PAGE = 50, AHEAD = 100, KEEP = 20, SETTLE = 150, POLL = 15000;
  // Browsers lay out at most some 17 to 33 million pixels: a longer list scrolls by proportion.
  const TALLEST = 8000000;
  const $ = (id) => document.getElementById(id);
  const list = $("list"), rows = $("rows");
  const state = {
    unread: false, starred: false, feed: "", view: "", search: "", total: 0, known: false, shift: 0, current: -1,
    items: new Map(), loading: new Set(), drawn: new Map(), generation: 0, open: null,
  };

  // The token came in the address once; the server keeps it in a cookie from then on.
  if (location.search) history.replaceState(null, "", "/");

  function query(extra) {
    const params = new URLSearchParams(extra);
    if (state.unread) params.set("unread", "1");
    if (state.starred) params.set("starred", "1");
    if (state.feed) params.set("feed", state.feed);
    if (state.view) params.set("view", state.view);
    if (state.search) params.set("search", state.search);
    return params.toString();
  }
  async function call(path, method) {
    const init = method === "POST" ? { method, headers: { "X-Feedsync": "1" } } : {};
    const response = await fetch(path, { credentials: "same-origin", ...init });
    if (!response.ok) throw new Error(path + ": " + response.status);
    return response.json();
  }

  // Row i of the list is row i + shift on the server: items that arrived after the list was
  // loaded stay above it until the reader asks for them. Items are kept by the list's row, so a
  // later shift changes only what is fetched from then on.
  function itemAt(i) {
    return state.items.get(i);
  }

  async function load(page) {
    const key = page + ":" + state.shift;
    if (state.loading.has(key)) return;
    state.loading.add(key);
    const generation = state.generation, shift = state.shift;
    try {
      const body = await call("/api/items?" + query({ page, per_page: PAGE }));
      if (generation !== state.generation) return;
      body.items.forEach((item, k) => {
        const row = (page - 1) * PAGE + k - shift;
        if (row >= 0) state.items.set(row, item);
      });
      if (!state.known) {
        state.known = true;
        state.total = body.total;
        rows.style.height = Math.min(state.total * ROW, TALLEST) + "px";
        $("count").textContent = state.total + (state.total === 1 ? " item" : " items");
      }
      draw();
    } catch (error) {
      // Asked again at the next scroll (or, for the first page, the next poll).
      if (generation === state.generation) state.loading.delete(key);
    }
  }

  // The row (fractional) at the top of the list's viewport, and where row i is drawn.
  function topRow() {
    const range = Math.min(state.total * ROW, TALLEST) - list.clientHeight;
    if (state.total * ROW <= TALLEST || range <= 0) return list.scrollTop / ROW;
    return (list.scrollTop / range) * (state.total - list.clientHeight / ROW);
  }
  function rowTop(i) {
    return list.scrollTop + (i - topRow()) * ROW;
  }
  function scrollToRow(row) {
    const range = Math.min(state.total * ROW, TALLEST) - list.clientHeight;
    list.scrollTop = state.total * ROW <= TALLEST || range <= 0
      ? row * ROW : (row / (state.total - list.clientHeight / ROW)) * range;
  }

  function visible() {
    const top = topRow();
    return [Math.floor(top), Math.min(state.total - 1, Math.floor(top + list.clientHeight / ROW))];
  }

  function draw() {
    if (!state.known) return;
    const [first, last] = visible();
    // The pages of the rows ahead of those in view, and of a page before them.
    for (let i = Math.max(0, first - PAGE); i <= Math.min(state.total - 1, last + AHEAD); i++) {
      if (!state.items.has(i)) load(Math.floor((i + state.shift) / PAGE) + 1);
    }
    const from = Math.max(0, first - KEEP), to = Math.min(state.total - 1, last + KEEP);
    for (const [i, element] of state.drawn) {
      if (i < from || i > to) { element.remove(); state.drawn.delete(i); }
    }
    for (let i = from; i <= to; i++) {
      const item = itemAt(i);
      let element = state.drawn.get(i);
      if (element && element.dataset.number === String(item ? item.number : "")) {
        element.classList.toggle("read", Boolean(item && !item.unread));
        element.classList.toggle("current", i === state.current);
        if (item) element.querySelector(".meta").textContent = metaOf(item);
        element.style.top = rowTop(i) + "px";
        continue;
      }
      const fresh = rowElement(i, item);
      if (element) element.replaceWith(fresh); else rows.append(fresh);
      state.drawn.set(i, fresh);
    }
  }

  // An item's title (its link or id when it has none), and its feed and local date: the time
  // for today's items in a row, else the date, as `feedsync list` writes them; the date and time
  // in the article's header.
  function titleOf(item) {
    return item.title || item.link || item.id;
  }
  function two(n) { return String(n).padStart(2, "0"); }
  function when(published, whole) {
    const date = new Date(published);
    if (isNaN(date)) return "";
    const day = date.getFullYear() + "-" + two(date.getMonth() + 1) + "-" + two(date.getDate());
    const time = two(date.getHours()) + ":" + two(date.getMinutes());
    if (whole) return day + " " + time;
    return date.toDateString() === new Date().toDateString() ? time : day;
  }
  function metaOf(item, whole) {
    // The article's header also names who wrote it and its categories.
    const by = whole && item.author ? item.author : "";
    const tags = whole && item.categories ? item.categories.join(", ") : "";
    return [item.starred ? "★" : "", item.feed, by, tags, item.published && when(item.published, whole)]
      .filter(Boolean).join(" · ");
  }

  // Everything from the server is text, never markup.
  function rowElement(i, item) {
    const element = document.createElement("div");
    element.className = "row" + (item ? (item.unread ? "" : " read") : " loading") + (i === state.current ? " current" : "");
    element.style.top = rowTop(i) + "px";
    element.dataset.row = i;
    element.dataset.number = item ? item.number : "";
    let thumb;
    if (item && item.picture) {
      thumb = document.createElement("img");
      thumb.loading = "lazy";
      thumb.alt = "";
      thumb.addEventListener("error", () => pictureFailed(item), { once: true });
      thumb.src = item.picture;
    } else {
      thumb = document.createElement("div");
    }
    thumb.className = "thumb";
    const text = document.createElement("div");
    text.className = "text";
    const title = document.createElement("div");
    title.className = "title";
    title.textContent = item ? titleOf(item) : "…";
    const meta = document.createElement("div");
    meta.className = "meta";
    meta.textContent = item ? metaOf(item) : "";
    text.append(title, meta);
    const dot = document.createElement("span");
    dot.className = "dot";
    element.append(thumb, text, dot);
    element.addEventListener("click", () => { state.current = i; open(i); });
    return element;
  }

  // A row in view where the scroll settled whose picture is not cached: asked for at once, ahead
  // of any pull's window (never for rows flung past).
  const asked = new Set();
  async function fetchPicture(item) {
    if (asked.has(item.number)) return;
    asked.add(item.number);
    try {
      const body = await call("/api/items/" + item.number + "/picture", "POST");
      if (!body.picture) return;
      item.picture = body.picture;
      redrawRowsOf(item);
    } catch (error) {
      // Offline, or the picture failed: the placeholder stays.
    }
  }

  // A thumbnail the server answered 404 for: the cache found its file damaged or gone (changed
  // behind feedsync's back) and dropped it, so it is due again. Asked for once more at once; the
  // placeholder shows meanwhile.
  const failed = new Set();
  function pictureFailed(item) {
    if (failed.has(item.number)) return;
    failed.add(item.number);
    item.picture = null;
    item.image.status = "pending";
    asked.delete(item.number);
    redrawRowsOf(item);
    fetchPicture(item);
  }

  function redrawRowsOf(item) {
    for (const [i, element] of state.drawn) {
      if (element.dataset.number === String(item.number)) {
        const fresh = rowElement(i, item);
        element.replaceWith(fresh);
        state.drawn.set(i, fresh);
      }
    }
  }

  function reset() {
    state.generation += 1;
    state.items.clear();
    state.loading = new Set();
    state.drawn.clear();
    state.known = false;
    state.shift = 0;
    state.current = -1;
    rows.replaceChildren();
    list.scrollTop = 0;
    $("new").hidden = true;
    load(1);
  }

  // Where scrolling settles, the reading position; a fling that goes on is not reported.
  let settle = 0;
  list.addEventListener("scroll", () => {
    draw();
    clearTimeout(settle);
    settle = setTimeout(report, SETTLE);
  }, { passive: true });
  function report() {
    const [first, last] = visible();
    for (let i = first; i <= last; i++) {
      const item = itemAt(i);
      if (item && !item.picture && item.image.status === "pending") fetchPicture(item);
    }
    call("/api/position?" + query({ row: first + state.shift, per_page: PAGE }), "POST").catch(() => {});
  }

  async function open(i) {
    const item = itemAt(i);
    if (!item) return;
    state.open = item;
    $("title").textContent = titleOf(item);
    $("meta").textContent = metaOf(item, true);
    const original = $("original");
    if (item.link && /^https?:\/\//i.test(item.link)) { original.href = item.link; original.hidden = false; } else { original.hidden = true; }
    $("content").src = "/content/" + item.number;
    $("reader").hidden = false;
    fetchArticlePictures(item);
    if (item.unread) await mark(item, true);
    showToggle();
  }
  // The pictures inside the article that are not cached yet, asked for at once; when any came,
  // the article (its frame only) is shown again with them.
  async function fetchArticlePictures(item) {
    try {
      const body = await call("/api/items/" + item.number + "/pictures", "POST");
      if (body.fetched > 0 && state.open === item) $("content").src = "/content/" + item.number;
    } catch (error) {
      // Offline: the placeholders stay.
    }
  }
  function close() { $("reader").hidden = true; state.open = null; $("content").src = "about:blank"; list.focus(); }
  async function mark(item, read) {
    try {
      await call("/api/items/" + item.number + "/read?read=" + (read ? 1 : 0), "POST");
      item.unread = !read;
      draw();
      showToggle();
    } catch (error) { /* stays as it was */ }
  }
  async function star(item, starred) {
    try {
      await call("/api/items/" + item.number + "/star?starred=" + (starred ? 1 : 0), "POST");
      item.starred = starred;
      draw();
      showToggle();
      if (state.open === item) $("meta").textContent = metaOf(item, true);
    } catch (error) { /* stays as it was */ }
  }
  function showToggle() {
    if (!state.open) return;
    $("toggle").textContent = state.open.unread ? "Mark read" : "Mark unread";
    $("star").textContent = state.open.starred ? "Unstar" : "Star";
  }

  function move(by) {
    if (!state.known || state.total === 0) return;
    state.current = Math.max(0, Math.min(state.total - 1, state.current + by));
    const [first, last] = visible();
    if (state.current < first || state.current > last - 1) scrollToRow(Math.max(0, state.current - 2));
    draw();
  }

  document.addEventListener("keydown", (event) => {
    const tag = event.target.tagName;
    if (tag === "INPUT" || tag === "SELECT" || tag === "TEXTAREA") {
      if (event.key === "Escape") event.target.blur();
      return;
    }
    // Enter on a focused button or link is that button's or link's.
    if ((tag === "BUTTON" || tag === "A") && (event.key === "Enter" || event.key === " ")) return;
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    const reading = !$("reader").hidden;
    switch (event.key) {
      case "j": if (reading) { close(); } move(1); if (reading) open(state.current); break;
      case "k": if (reading) { close(); } move(-1); if (reading) open(state.current); break;
      case "o": case "Enter": if (!reading && state.current >= 0) open(state.current); break;
      case "m": {
        const item = reading ? state.open : itemAt(state.current);
        if (item) mark(item, item.unread);
        break;
      }
      case "s": {
        const item = reading ? state.open : itemAt(state.current);
        if (item) star(item, !item.starred);
        break;
      }
      case "/": event.preventDefault(); $("search").focus(); break;
      case "Escape": if (reading) close(); break;
      default: return;
    }
  });

  for (const button of document.querySelectorAll(".view")) {
    button.addEventListener("click", () => {
      state.unread = button.dataset.unread === "1";
      state.starred = button.dataset.starred === "1";
      for (const other of document.querySelectorAll(".view")) other.classList.toggle("on", other === button);
      reset();
    });
  }
  // A feed's number, or a saved view's name after "view:".
  $("feed").addEventListener("change", () => {
    const value = $("feed").value;
    state.view = value.startsWith("view:") ? value.slice(5) : "";
    state.feed = state.view ? "" : value;
    reset();
  });
  let typing = 0;
  $("search").addEventListener("input", () => {
    clearTimeout(typing);
    typing = setTimeout(() => { state.search = $("search").value.trim(); reset(); }, 300);
  });
  $("close").addEventListener("click", close);
  $("toggle").addEventListener("click", () => { if (state.open) mark(state.open, state.open.unread); });
  $("star").addEventListener("click", () => { if (state.open) star(state.open, !state.open.starred); });
  $("new").addEventListener("click", reset);

  // New items from a pull: a bar at the top, and what the reader sees does not move. The last
  // row loaded anchors the list, where the next fetches continue: the row its item is at now on
  // the server, less its row here, is the shift for everything fetched from now on.
  async function poll() {
    if (!state.known) load(1);
    const timeline = state.known && !state.unread && !state.starred && !state.feed && !state.view && !state.search;
    const first = Math.max(-1, ...state.items.keys());
    const anchor = timeline && first >= 0 ? itemAt(first) : undefined;
    try {
      const status = await call("/api/status" + (anchor ? "?anchor=" + anchor.number : ""));
      const waiting = status.total - state.total;
      if (!timeline || waiting <= 0) return;
      if (anchor && status.row !== null) state.shift = Math.max(state.shift, status.row - first);
      $("new").textContent = waiting + (waiting === 1 ? " new item" : " new items");
      $("new").hidden = false;
    } catch (error) { /* the server is gone for now */ }
  }
  setInterval(poll, POLL);

  // The feeds by folder (those in none first), each with its unread count; then the saved views.
  call("/api/feeds").then((body) => {
    const groups = new Map();
    for (const feed of body.feeds) {
      const option = document.createElement("option");
      option.value = feed.number;
      option.textContent = feed.title + (feed.unread > 0 ? " (" + feed.unread + ")" : "");
      if (!feed.folder) { $("feed").append(option); continue; }
      if (!groups.has(feed.folder)) {
        const group = document.createElement("optgroup");
        group.label = feed.folder;
        group.dataset.unread = 0;
        groups.set(feed.folder, group);
      }
      const group = groups.get(feed.folder);
      group.append(option);
      group.dataset.unread = Number(group.dataset.unread) + feed.unread;
    }
    for (const [folder, group] of [...groups].sort((a, b) => a[0].localeCompare(b[0]))) {
      const unread = Number(group.dataset.unread);
      group.label = folder + (unread > 0 ? " (" + unread + ")" : "");
      $("feed").append(group);
    }
    if (body.views.length === 0) return;
    const views = document.createElement("optgroup");
    views.label = "Views";
    for (const view of body.views) {
      const option = document.createElement("option");
      option.value = "view:" + view.name;
      option.textContent = view.name + (view.unread > 0 ? " (" + view.unread + ")" : "");
      views.append(option);
    }
    $("feed").append(views);
  }).catch(() => {});
  load(1);
})();
