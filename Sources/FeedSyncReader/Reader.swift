// FeedSyncReader: `feedsync read`, the endless list in the terminal. Its API: Session.run (the
// session: the terminal taken and given back, the loop), over Reader (what each key does),
// ReaderList (the rows held), the drawing (ReaderView), pictures (Graphics, Thumbnails), the
// terminal's input (Input) and the frames written (Screen).

import FeedSyncFrontend
import FeedSyncKit
import Foundation

/// The reader's state and what each input does to it; drawn by `ReaderView`, driven by the
/// session's loop (`Session.run`). The store is read through `FeedSync` alone.
package final class Reader {
    let library: FeedSync
    package var list: ReaderList
    package var mode: Mode = .list
    /// The list row the cursor is on, and the first row on screen.
    package var cursor = 0
    package var top = 0
    package var width = 80
    package var height = 24
    /// One cell in pixels (the terminal's answer, else its window size over its cells).
    package var cell = (width: 8, height: 16)
    package var pictures: PictureProtocol
    /// How `pictures` was chosen, for `?`.
    package var chosenBy = "asked for"
    /// A sentence for the status line, until the next key.
    package var message: String?
    package var pulling = false
    /// Whether the cursor has rested `settle` since the last key: pictures are drawn and asked for.
    package var settled = true
    /// The reading position last recorded, so a rest on the same place writes nothing.
    var recorded: ReadingPosition?
    /// Titles of the feeds and folders chosen from `f`, for the header.
    var scope = "all feeds"
    package var quit = false
    /// Whether the terminal said its cell's size (else it is its window's over its cells).
    var cellMeasured = false
    /// Where background work (a pull, the prefetcher's fetches) reports, and how the terminal is
    /// given to a browser: the session's.
    var post: @Sendable (Event) -> Void = { _ in }
    var handOver: (() -> Bool) -> Bool = { $0() }

    package enum Mode {
        case list
        case item(ItemPage)
        case feeds(Chooser)
        case prompt(Prompt)
        case help
    }

    /// A line read at the bottom: a search, or which link to open.
    package struct Prompt {
        package enum Purpose {
            case search
            case link(ItemPage)
        }
        package var purpose: Purpose
        package var label: String
        package var text = ""
    }

    /// The feeds and folders to choose from, with their unread counts.
    package struct Chooser {
        package struct Entry {
            package var title: String
            package var unread: Int
            package var query: ListQuery
            package var depth: Int
        }
        package var entries: [Entry]
        package var cursor = 0
        package var top = 0
    }

    /// An item as read: its lines at the screen's width, its links, where its pictures go.
    package struct ItemPage {
        package var detail: ItemDetail
        package var lines: [String]
        package var links: [String]
        /// Boxes for the article's pictures: the line each starts at, and which picture.
        package var boxes: [(line: Int, picture: ArticlePicture)]
        package var scroll = 0
        /// Whether the list's row was unread before it was opened (it shows read after).
        var wasUnread: Bool
    }

    /// The settle time: keys closer than this are a fling.
    static let settle = Duration.milliseconds(150)
    /// Lines a list row takes, and the thumbnail's box.
    static let rowLines = 2
    static let boxColumns = 6

    package init(library: FeedSync, query: ListQuery, pictures: PictureProtocol) {
        self.library = library
        list = ReaderList(query: query)
        self.pictures = pictures
    }

    /// Rows of the list on screen: all lines but the header and the status line.
    package var visibleRows: Int { max(1, (height - 2) / Self.rowLines) }

    /// Whether rows get a box for a picture (a terminal too narrow gives its width to the titles).
    var boxed: Bool { width >= 40 }

    // MARK: Keys

    /// What `input` does. Returns whether the list's place or the rows on screen changed (the
    /// pictures then wait for the cursor to rest).
    package func handle(_ input: Input) async -> Bool {
        message = nil
        switch input {
        case .reply: return false
        case .paste(let text):
            if case .prompt(var prompt) = mode {
                prompt.text += Terminal.safe(text)
                mode = .prompt(prompt)
            }
            return false
        case .key(let key):
            switch mode {
            case .list: return await listKey(key)
            case .item(let page): return await itemKey(key, page)
            case .feeds(let chooser): return await chooserKey(key, chooser)
            case .prompt(let prompt): return await promptKey(key, prompt)
            case .help:
                mode = .list
                return false
            }
        }
    }

    func listKey(_ key: Key) async -> Bool {
        switch key {
        case .character("j"), .down: return await move(to: cursor + 1)
        case .character("k"), .up: return await move(to: cursor - 1)
        case .wheelDown: return await scroll(by: 3)
        case .wheelUp: return await scroll(by: -3)
        case .character(" "), .pageDown, .control(0x06): return await page(by: 1)
        case .pageUp, .control(0x02), .character("b"): return await page(by: -1)
        case .character("g"), .home: return await restart(atEnd: false)
        case .character("G"), .end: return await restart(atEnd: true)
        case .enter, .character("l"), .right: await open()
        case .click(_, let row):
            let index = top + (row - 1) / Self.rowLines
            if row >= 1, row < 1 + visibleRows * Self.rowLines, index < list.total {
                if index == cursor { await open() } else { return await move(to: index) }
            }
        case .character("o"): await openInBrowser(row: cursor, link: nil)
        case .character("m"): await toggleRead()
        case .character("s"): await toggleStar()
        case .character("u"):
            var query = list.query
            query.unread.toggle()
            return await show(query, saying: query.unread ? "unread items only" : "all items")
        case .character("/"): mode = .prompt(Prompt(purpose: .search, label: "search: ", text: ""))
        case .escape where list.query.search != nil:
            var query = list.query
            query.search = nil
            return await show(query, saying: "search cleared")
        case .character("f"): await chooseFeeds()
        case .character("r"): pullNow()
        case .character("?"): mode = .help
        case .character("q"), .control(0x03): quit = true
        default: break
        }
        return false
    }

    /// Moves the cursor to list row `index` (clamped), the screen following it.
    func move(to index: Int) async -> Bool {
        let target = min(max(0, index), max(0, list.total - 1))
        guard target != cursor || list.rows.isEmpty else { return false }
        cursor = target
        if cursor < top { top = cursor }
        if cursor >= top + visibleRows { top = cursor - visibleRows + 1 }
        await hold()
        return true
    }

    func scroll(by rows: Int) async -> Bool {
        let last = max(0, list.total - visibleRows)
        let newTop = min(max(0, top + rows), last)
        guard newTop != top else { return false }
        top = newTop
        cursor = min(max(cursor, top), top + visibleRows - 1)
        await hold()
        return true
    }

    func page(by pages: Int) async -> Bool {
        let step = visibleRows * pages
        let last = max(0, list.total - visibleRows)
        let newTop = min(max(0, top + step), last)
        let newCursor = min(max(0, cursor + step), max(0, list.total - 1))
        guard newTop != top || newCursor != cursor else { return false }
        top = newTop
        cursor = min(max(newCursor, top), top + visibleRows - 1)
        await hold()
        return true
    }

    /// Reads the rows around the screen.
    func hold() async {
        do { try await list.hold(top..<top + visibleRows, library) } catch { message = error.message }
    }

    /// The list read again from its top (with the items a pull added) or its end.
    package func restart(atEnd: Bool) async -> Bool {
        do {
            try await list.start(library, atEnd: atEnd)
        } catch {
            message = error.message
            return false
        }
        cursor = atEnd ? max(0, list.total - 1) : 0
        top = atEnd ? max(0, list.total - visibleRows) : 0
        await hold()
        return true
    }

    /// Shows another list (a filter, a search, a feed) from its top.
    func show(_ query: ListQuery, saying: String? = nil) async -> Bool {
        do {
            try await list.start(library, query: query)
        } catch {
            message = error.message
            return false
        }
        (cursor, top) = (0, 0)
        await hold()
        if let saying { message = list.total == 0 ? saying + ": none" : saying }
        return true
    }

    func toggleRead() async {
        guard let item = list.row(cursor) else { return }
        do {
            _ = try await library.mark([item.number], read: !item.read)
            list.update(cursor) { $0.read.toggle() }
        } catch { message = error.message }
    }

    func toggleStar() async {
        guard let item = list.row(cursor) else { return }
        do {
            _ = try await library.star([item.number], starred: !item.starred)
            list.update(cursor) { $0.starred.toggle() }
        } catch { message = error.message }
    }

    /// Opens the item under the cursor, marking it read as `show` does.
    func open() async {
        guard let item = list.row(cursor) else { return }
        do {
            guard let detail = try await library.readerItem(number: item.number) else {
                message = "item \(item.number) is no longer stored"
                return
            }
            if !item.read { _ = try await library.mark([item.number], read: true) }
            list.update(cursor) { $0.read = true }
            mode = .item(ReaderView.page(detail, width: width, cell: cell, wasUnread: !item.read))
            // The article's pictures not cached yet, asked for at once; the page shows them as they come.
            if detail.pictures.contains(where: { $0.status != .cached }) {
                let (library, post, number) = (library, post, item.number)
                Task {
                    if await library.fetchArticlePictures(ofItem: number) > 0 { post(.articlePictures(number)) }
                }
            }
        } catch { message = error.message }
    }

    /// The item `number` read again (its pictures came), if it is the one open.
    func reopen(_ number: Int64) async {
        guard case .item(let page) = mode, page.detail.item.number == number,
            let detail = try? await library.readerItem(number: number)
        else { return }
        var again = ReaderView.page(detail, width: width, cell: cell, wasUnread: page.wasUnread)
        again.scroll = min(page.scroll, max(0, again.lines.count - (height - 2)))
        mode = .item(again)
    }

    /// The screen's size changed: the cursor kept in view, the item laid out again.
    func relayout() {
        if cursor >= top + visibleRows { top = cursor - visibleRows + 1 }
        if case .item(let page) = mode {
            var again = ReaderView.page(page.detail, width: width, cell: cell, wasUnread: page.wasUnread)
            again.scroll = min(page.scroll, max(0, again.lines.count - (height - 2)))
            mode = .item(again)
        }
    }

    /// The prefetcher cached item `number`'s picture.
    func pictureCached(_ number: Int64) {
        guard let index = list.rows.firstIndex(where: { $0.number == number }) else { return }
        list.update(list.first + index) { $0.imageStatus = .cached }
    }

    /// Opens the link of the row at `row` (or the page's footnote `link`) with `$BROWSER`,
    /// the terminal given to it meanwhile.
    func openInBrowser(row: Int, link: Int?, in page: ItemPage? = nil) async {
        var url: String?
        if let link, let page {
            url = page.links.indices.contains(link - 1) ? page.links[link - 1] : nil
            if url == nil { message = "no link [\(link)]" }
        } else {
            url = page?.detail.item.link ?? list.row(row)?.link
            if url == nil { message = "this item has no link" }
        }
        guard let url else { return }
        let opened = handOver { Browser.open(url) }
        message = opened ? "opened " + Terminal.safe(url) : "no browser could open it: set BROWSER"
    }

    func chooseFeeds() async {
        do {
            let summaries = try await library.feedSummaries()
            var views: [(view: SavedView, query: ListQuery)] = []
            for view in try await library.views(counting: true) {
                views.append((view, try await library.query(ListQuery(), inView: view.name)))
            }
            mode = .feeds(Chooser(entries: ReaderView.entries(summaries, views: views)))
        } catch { message = (error as? SyncError)?.message ?? (error as? StoreError)?.message ?? "\(error)" }
    }

    /// Starts a pull through the lock cron's pull takes; one running already is said.
    func pullNow() {
        guard !pulling else {
            message = "pulling already"
            return
        }
        guard let writer = try? library.lockedForWriting() else {
            message = "a pull is running already; what it stores shows as new"
            return
        }
        pulling = true
        let post = post
        Task {
            let run = try? await writer.pull(.subscribed, settings: FeedSync.PullSettings())
            let new = run?.reports.compactMap { $0?.newItems }.reduce(0, +) ?? 0
            post(.pulled(new: new, failed: run.map { $0.reports.contains { $0?.error != nil } } ?? true))
        }
    }

    // MARK: The item, the chooser, the prompt

    func itemKey(_ key: Key, _ page: ItemPage) async -> Bool {
        var page = page
        let room = height - 2
        let last = max(0, page.lines.count - room)
        switch key {
        case .character("j"), .down, .wheelDown: page.scroll = min(last, page.scroll + (key == .wheelDown ? 3 : 1))
        case .character("k"), .up, .wheelUp: page.scroll = max(0, page.scroll - (key == .wheelUp ? 3 : 1))
        case .character(" "), .pageDown: page.scroll = min(last, page.scroll + room - 1)
        case .pageUp, .character("b"): page.scroll = max(0, page.scroll - room + 1)
        case .character("g"), .home: page.scroll = 0
        case .character("G"), .end: page.scroll = last
        case .character("o"):
            if page.links.isEmpty {
                await openInBrowser(row: cursor, link: nil, in: page)
            } else {
                mode = .prompt(
                    Prompt(purpose: .link(page), label: "open link [1-\(page.links.count)] (Enter: the item's own): "))
                return false
            }
        case .character(let digit) where digit.isNumber:
            await openInBrowser(row: cursor, link: Int(String(digit)), in: page)
        case .character("m"):
            await toggleRead()
        case .character("s"):
            await toggleStar()
            page.detail.item.starred.toggle()
        case .character("q"), .escape, .character("h"), .left, .backspace:
            mode = .list
            return true
        case .control(0x03):
            quit = true
        case .character("?"):
            mode = .help
            return false
        default: return false
        }
        mode = .item(page)
        return true
    }

    func chooserKey(_ key: Key, _ chooser: Chooser) async -> Bool {
        var chooser = chooser
        let room = height - 2
        switch key {
        case .character("j"), .down, .wheelDown: chooser.cursor = min(chooser.entries.count - 1, chooser.cursor + 1)
        case .character("k"), .up, .wheelUp: chooser.cursor = max(0, chooser.cursor - 1)
        case .character(" "), .pageDown: chooser.cursor = min(chooser.entries.count - 1, chooser.cursor + room)
        case .pageUp: chooser.cursor = max(0, chooser.cursor - room)
        case .enter, .character("l"):
            let entry = chooser.entries[chooser.cursor]
            mode = .list
            var query = entry.query
            query.unread = list.query.unread
            scope = entry.title
            return await show(query)
        case .character("q"), .escape, .character("f"):
            mode = .list
            return true
        case .control(0x03): quit = true
        default: return false
        }
        if chooser.cursor < chooser.top { chooser.top = chooser.cursor }
        if chooser.cursor >= chooser.top + room { chooser.top = chooser.cursor - room + 1 }
        mode = .feeds(chooser)
        return false
    }

    func promptKey(_ key: Key, _ prompt: Prompt) async -> Bool {
        var prompt = prompt
        switch key {
        case .character(let character):
            guard prompt.text.count < 200 else { return false }
            prompt.text += Terminal.safe(String(character))
        case .backspace: _ = prompt.text.popLast()
        case .escape, .control(0x03), .control(0x07):
            if case .link(let page) = prompt.purpose { mode = .item(page) } else { mode = .list }
            return false
        case .enter:
            switch prompt.purpose {
            case .search:
                mode = .list
                var query = list.query
                query.search = prompt.text.isEmpty ? nil : ListQuery.words(prompt.text)
                if !prompt.text.isEmpty, query.search == nil {
                    message = "a search needs a letter or a digit"
                    return false
                }
                return await show(query, saying: query.search == nil ? "search cleared" : "search: " + prompt.text)
            case .link(let page):
                mode = .item(page)
                let number = Int(prompt.text.trimmingCharacters(in: .whitespaces))
                await openInBrowser(row: cursor, link: number, in: page)
                return false
            }
        default: return false
        }
        mode = .prompt(prompt)
        return false
    }

    // MARK: Where the reader rests

    /// The cursor rested: that place becomes the reading position (in a list the picture window
    /// follows), which steers a running pull's prefetch.
    func rest() async {
        settled = true
        guard !list.query.isFiltered else { return }
        let row = top + list.fresh
        let position = ReadingPosition(feedURL: list.query.feedURL, page: row / 20 + 1, perPage: 20)
        guard position != recorded else { return }
        recorded = position
        _ = try? await library.recordReadingPosition(in: list.query, row: row, perPage: 20)
    }
}
