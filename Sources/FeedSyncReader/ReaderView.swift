import FeedSyncFrontend
import FeedSyncKit
import Foundation

/// The reader drawn as text: the header, the list's rows (two lines each, a box for the picture
/// at their left), the item, the chooser, the keys; the status line at the bottom. Every string
/// from the network is made safe (`Terminal.safe`) before it reaches a cell.
package enum ReaderView {
    static let bar = Style(reverse: true)
    static let dim = Style(dim: true)
    static let cursorStyle = Style(reverse: true)

    /// Draws `reader` into a grid of its size, and says where its pictures' boxes are: each the
    /// item (and picture inside it, nil: its own) whose picture goes there.
    package static func draw(_ reader: Reader) -> (grid: Grid, boxes: [Box]) {
        var grid = Grid(width: reader.width, height: reader.height)
        var boxes: [Box] = []
        switch reader.mode {
        case .list: boxes = list(reader, &grid)
        case .prompt(let prompt):
            if case .link(let page) = prompt.purpose {
                boxes = item(page, reader, &grid)
            } else {
                boxes = list(reader, &grid)
            }
        case .item(let page): boxes = item(page, reader, &grid)
        case .feeds(let chooser): chooserView(chooser, reader, &grid)
        case .help:
            _ = list(reader, &grid)
            help(reader, &grid)
            boxes = []
        }
        status(reader, &grid)
        return (grid, boxes)
    }

    /// Where a picture goes: its cells, the item and which of its pictures (nil: its own).
    package struct Box: Equatable {
        package var row, column, columns, rows: Int
        package var item: Int64
        package var inside: Int?
    }

    static func header(_ text: String, right: String = "", _ grid: inout Grid) {
        grid.fill(row: 0, column: 0, count: grid.width, style: bar)
        let end = grid.put(
            " " + text, row: 0, column: 0, style: bar, limit: grid.width - Terminal.displayWidth(right) - 1)
        if !right.isEmpty {
            grid.put(
                right, row: 0, column: max(end + 1, grid.width - Terminal.displayWidth(right) - 1),
                style: Style(bold: true, reverse: true))
        }
    }

    static func list(_ reader: Reader, _ grid: inout Grid) -> [Box] {
        let query = reader.list.query
        var title = "feedsync · " + Terminal.safe(reader.scope)
        if query.unread { title += " · unread" }
        if query.starred { title += " · starred" }
        if let search = query.search { title += " · search " + Terminal.safe(search) }
        let fresh = reader.list.fresh
        header(title, right: fresh > 0 ? "▲ \(fresh) new · g shows them" : "", &grid)
        guard reader.list.total > 0 else {
            let empty =
                query.isFiltered
                ? "No items here. u, / and f change what is shown."
                : "No items stored yet: feedsync add URL, then feedsync pull (or r here)."
            grid.put(empty, row: 2, column: 2)
            return []
        }
        var boxes: [Box] = []
        let text = reader.boxed ? Reader.boxColumns + 1 : 0
        let now = Date()
        for line in 0..<reader.visibleRows {
            let index = reader.top + line
            guard let item = reader.list.row(index) else { continue }
            let row = 1 + line * Reader.rowLines
            let chosen = index == reader.cursor
            let style = chosen ? cursorStyle : .plain
            grid.fill(row: row, column: text, count: grid.width - text, style: style)
            grid.fill(row: row + 1, column: text, count: grid.width - text, style: style)
            // `list`'s marks: • unread, * starred.
            var about = item.read ? "  " : "• "
            about += item.starred ? "* " : "  "
            var details = Terminal.safe(item.feedName)
            if let seconds = item.published.flatMap(StoredDate.seconds) {
                details += " · " + LocalTime.dateOrTime(seconds: time_t(seconds), now: now)
            }
            var at = grid.put(about, row: row, column: text, style: style)
            at = grid.put(details, row: row, column: at, style: chosen ? style : dim)
            let title = ItemWords.title(item)
            grid.put(
                "  " + Terminal.safe(title), row: row + 1, column: text,
                style: Style(bold: !item.read, reverse: chosen),
                limit: grid.width - text - 1)
            if reader.boxed {
                if item.imageStatus == .cached || item.imageStatus == .pending {
                    boxes.append(
                        Box(
                            row: row, column: 0, columns: Reader.boxColumns, rows: Reader.rowLines, item: item.number,
                            inside: nil))
                }
                if item.imageStatus == .failed { grid.put("  ×", row: row, column: 0, style: dim) }
            }
        }
        return boxes
    }

    static func status(_ reader: Reader, _ grid: inout Grid) {
        let row = grid.height - 1
        grid.fill(row: row, column: 0, count: grid.width, style: bar)
        if case .prompt(let prompt) = reader.mode {
            let end = grid.put(prompt.label + prompt.text, row: row, column: 0, style: bar)
            grid.put(" ", row: row, column: end, style: .plain)
            return
        }
        var left: String
        switch reader.mode {
        case .item(let page):
            left = " line \(min(page.scroll + 1, page.lines.count)) of \(page.lines.count)"
            if !page.links.isEmpty { left += " · o: open a link" }
        case .feeds(let chooser): left = " \(chooser.cursor + 1) of \(chooser.entries.count) · Enter: show"
        default: left = reader.list.total > 0 ? " \(reader.cursor + 1) of \(reader.list.total)" : " 0 items"
        }
        if reader.pulling { left += " · pulling…" }
        if let message = reader.message { left += " · " + message }
        let right = "? keys "
        grid.put(left, row: row, column: 0, style: bar, limit: grid.width - right.count - 1)
        grid.put(right, row: row, column: grid.width - right.count, style: bar)
    }

    // MARK: The item

    /// The item as lines at `width`: its title, feed, author, date and link, its text with its
    /// links as footnotes, a box of lines after the block each cached picture is in.
    package static func page(_ detail: ItemDetail, width: Int, cell: (width: Int, height: Int), wasUnread: Bool)
        -> Reader.ItemPage
    {
        let item = detail.item
        let room = max(20, min(width - 2, 100))
        var lines = Terminal.wrap(Terminal.safe(item.title.isEmpty ? "(no title)" : item.title), width: room).map {
            "\u{1B}[1m" + $0 + "\u{1B}[22m"
        }
        var about = Terminal.safe(item.feedName)
        if let author = detail.item.author { about += " · " + Terminal.safe(author) }
        if !detail.item.categories.isEmpty {
            about += " · " + Terminal.safe(detail.item.categories.joined(separator: ", "))
        }
        if let date = item.published.flatMap({ LocalTime.string($0, time: true) }) { about += " · " + date }
        lines += Terminal.wrap(about, width: room)
        if let link = item.link { lines.append(Terminal.truncate(Terminal.safe(link), toCells: room)) }
        for file in item.enclosures {
            let words = Words.about(file)
            lines.append(
                Terminal.truncate(
                    "enclosure: " + Terminal.safe(file.url) + (words.isEmpty ? "" : " (\(Terminal.safe(words)))"),
                    toCells: room))
        }
        lines.append("")
        let rendered = detail.rendered
        // The pictures cached, by the reference the content writes, each in its block.
        var byBlock: [Int: [ArticlePicture]] = [:]
        for picture in rendered.pictures {
            if let stored = detail.pictures.first(where: { $0.source == picture.source && $0.status == .cached }) {
                byBlock[min(picture.block, rendered.blocks.count - 1), default: []].append(stored)
            }
        }
        var ends: [Int] = []
        let body = TextLayout.lines(rendered, width: room, styled: true) { ends.append($0) }
        var boxes: [(line: Int, picture: ArticlePicture)] = []
        var taken = 0
        let boxLines = max(4, min(12, 200 / max(1, cell.height)))
        for (block, end) in ends.enumerated() {
            lines += body[taken..<end]
            taken = end
            for picture in byBlock[block] ?? [] {
                lines.append("")
                boxes.append((lines.count, picture))
                lines += Array(repeating: "", count: boxLines)
            }
        }
        lines += body[taken...]
        if !rendered.links.isEmpty {
            lines.append("")
            lines += rendered.references.map { Terminal.truncate(Terminal.safe($0), toCells: room) }
        }
        return Reader.ItemPage(detail: detail, lines: lines, links: rendered.links, boxes: boxes, wasUnread: wasUnread)
    }

    static func item(_ page: Reader.ItemPage, _ reader: Reader, _ grid: inout Grid) -> [Box] {
        let item = page.detail.item
        header(Terminal.safe(item.feedName) + (item.starred ? " · starred" : ""), &grid)
        let room = grid.height - 2
        for line in 0..<room where page.scroll + line < page.lines.count {
            grid.put(page.lines[page.scroll + line], row: 1 + line, column: 1, limit: grid.width - 2)
        }
        let boxLines = max(4, min(12, 200 / max(1, reader.cell.height)))
        let columns = min(grid.width - 2, boxLines * reader.cell.height * 2 / max(1, reader.cell.width))
        // A picture whose whole box is on screen.
        return page.boxes.compactMap { box in
            let row = 1 + box.line - page.scroll
            guard row >= 1, row + boxLines <= grid.height - 1 else { return nil }
            return Box(
                row: row, column: 1, columns: columns, rows: boxLines, item: item.number, inside: box.picture.position)
        }
    }

    // MARK: The chooser and the keys

    /// All items, then each folder (its feeds' unread counts added) with its feeds under it, then
    /// the feeds in no folder, then the saved views (each with its query).
    package static func entries(_ summaries: [FeedSummary], views: [(view: SavedView, query: ListQuery)] = [])
        -> [Reader.Chooser.Entry]
    {
        var entries = [
            Reader.Chooser.Entry(
                title: "all feeds", unread: summaries.reduce(0) { $0 + $1.unread }, query: ListQuery(), depth: 0)
        ]
        let folders = Set(summaries.compactMap(\.feed.folder)).sorted {
            $0.localizedCaseInsensitiveCompare($1) == .orderedAscending
        }
        func feeds(_ folder: String?) -> [Reader.Chooser.Entry] {
            summaries.filter { $0.feed.folder == folder }
                .sorted { $0.feed.name.localizedCaseInsensitiveCompare($1.feed.name) == .orderedAscending }
                .map {
                    Reader.Chooser.Entry(
                        title: Terminal.safe($0.feed.name), unread: $0.unread, query: ListQuery(feedURL: $0.feed.url),
                        depth: folder == nil ? 0 : 1)
                }
        }
        for folder in folders {
            let inside = summaries.filter { $0.feed.folder == folder }
            entries.append(
                Reader.Chooser.Entry(
                    title: Terminal.safe(folder) + "/", unread: inside.reduce(0) { $0 + $1.unread },
                    query: ListQuery(folder: folder), depth: 0))
            entries += feeds(folder)
        }
        return entries + feeds(nil)
            + views.map {
                Reader.Chooser.Entry(
                    title: "view: " + Terminal.safe($0.view.name), unread: $0.view.unread ?? 0, query: $0.query,
                    depth: 0)
            }
    }

    static func chooserView(_ chooser: Reader.Chooser, _ reader: Reader, _ grid: inout Grid) {
        header("feeds and folders · Enter shows one · q goes back", &grid)
        for line in 0..<(grid.height - 2) {
            let index = chooser.top + line
            guard index < chooser.entries.count else { break }
            let entry = chooser.entries[index]
            let style = index == chooser.cursor ? cursorStyle : .plain
            grid.fill(row: 1 + line, column: 0, count: grid.width, style: style)
            let count = entry.unread > 0 ? "\(entry.unread) unread " : ""
            grid.put(
                String(repeating: "  ", count: entry.depth + 1) + entry.title, row: 1 + line, column: 0,
                style: Style(bold: entry.unread > 0, reverse: index == chooser.cursor),
                limit: grid.width - count.count - 1)
            grid.put(count, row: 1 + line, column: grid.width - count.count, style: style)
        }
    }

    static let keys = [
        ("j k ↓ ↑", "next, previous item"), ("Space PgDn, b PgUp", "a screen down, up"),
        ("g G", "the top (with new items), the end"), ("Enter", "read the item (marks it read)"),
        ("o", "open the link ($BROWSER); in an item: o then a footnote's number"),
        ("m", "mark read or unread"), ("s", "star or unstar"), ("u", "unread items only, or all"),
        ("/", "search (Esc clears it)"), ("f", "feeds and folders, with their unread counts"),
        ("r", "pull now (one already running is said)"), ("q", "back, quit"), ("?", "these keys"),
    ]

    static func help(_ reader: Reader, _ grid: inout Grid) {
        var lines = keys.map { ($0.0.padding(toLength: 20, withPad: " ", startingAt: 0)) + $0.1 }
        lines.append("")
        lines.append("pictures: \(reader.pictures.rawValue) (\(reader.chosenBy)); the wheel scrolls")
        lines.append("any key goes back")
        let width = min(grid.width - 2, (lines.map { Terminal.displayWidth($0) }.max() ?? 0) + 4)
        let left = max(0, (grid.width - width) / 2)
        let top = max(1, (grid.height - lines.count - 2) / 2)
        for row in top..<min(grid.height - 1, top + lines.count + 2) {
            grid.fill(row: row, column: left, count: width, style: bar)
        }
        for (index, line) in lines.enumerated() where top + 1 + index < grid.height - 1 {
            grid.put(line, row: top + 1 + index, column: left + 2, style: bar, limit: width - 3)
        }
    }
}
