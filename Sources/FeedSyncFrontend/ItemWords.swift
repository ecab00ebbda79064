import FeedSyncKit
import Foundation

/// Items in words and in JSON, as `list` and `show` print them.
package enum ItemWords {
    /// `list --json`'s page `page` of pages of `perPage`.
    package static func jsonPage(_ listed: ListedPage, page: Int, perPage: Int) -> String {
        let items = listed.items.map { item in
            "{" + ItemJSON.fields(item, path: item.picturePath, position: item.position) + "}"
        }
        return """
            {"page": \(page), "per_page": \(perPage), "total": \(listed.total), \
            "items": [\(items.joined(separator: ", "))]}
            """
    }

    /// Lines for a person: the number, a star and an unread mark, the time (today's items) or the
    /// date, in the all-feeds view the feed, the title, and a picture's state where it tells
    /// something (not cached yet, failed); a footer with the page.
    package static func text(_ listed: ListedPage, page: Int, pages: Int, allFeeds: Bool, now: Date = Date()) -> String
    {
        var footer = "page \(page) of \(pages) · \(listed.total) item\(listed.total == 1 ? "" : "s")"
        footer += " · " + (listed.lastPullAt.map { "last pull \(relative($0))" } ?? "never pulled")
        guard !listed.items.isEmpty else {
            let hint =
                listed.total > 0
                ? "no items on this page"
                : listed.lastPullAt == nil ? "no items stored yet; run: feedsync add URL" : "no items"
            return hint + "\n" + footer
        }
        let numberWidth = listed.items.map { String($0.number).count }.max() ?? 1
        let dates = listed.items.map { item in
            item.published.flatMap(StoredDate.seconds).map { LocalTime.dateOrTime(seconds: time_t($0), now: now) } ?? ""
        }
        let dateWidth = dates.map(\.count).max() ?? 0
        let marked = listed.items.map { item -> String in
            switch item.imageStatus {
            case .none, .cached: ""
            case .pending, .failed: "[\(item.imageStatus.rawValue)]"
            }
        }
        let statusWidth = marked.contains { !$0.isEmpty } ? 1 + 9 : 0  // " [pending]"
        // The number, the star and unread marks (2), a space and the date, two spaces and the
        // title, the picture's state; in the all-feeds view two spaces and the feed before the
        // title, narrower on a narrow terminal so the title keeps 10 cells where it can.
        let fixed = numberWidth + 2 + 1 + dateWidth + 2 + statusWidth
        let feedWidth =
            allFeeds
            ? max(
                4, min(18, listed.items.map { Terminal.displayWidth(name($0)) }.max() ?? 0, Terminal.width - fixed - 12)
            )
            : 0
        let titleWidth = max(10, Terminal.width - fixed - (allFeeds ? feedWidth + 2 : 0))
        var lines: [String] = []
        for (index, item) in listed.items.enumerated() {
            var line = String(repeating: " ", count: numberWidth - String(item.number).count) + String(item.number)
            line += (item.starred ? "*" : " ") + (item.read ? " " : "•")
            line += " " + dates[index] + String(repeating: " ", count: dateWidth - dates[index].count)
            if allFeeds { line += "  " + padded(Terminal.truncate(name(item), toCells: feedWidth), to: feedWidth) }
            let title = Terminal.truncate(Terminal.safe(title(item)), toCells: titleWidth)
            let status = marked[index]
            line += "  " + (status.isEmpty ? title : padded(title, to: titleWidth) + " " + status)
            lines.append(line)
        }
        return (lines + [footer]).joined(separator: "\n")
    }

    /// Lines for a program: tab-separated fields, none cut or padded (tabs and line breaks in
    /// them are spaces, as everything untrusted is made safe).
    package static func fields(_ listed: ListedPage) -> [String] {
        listed.items.map { item in
            [
                String(item.number), item.read ? "read" : "unread",
                item.published.flatMap { LocalTime.string($0, time: true) } ?? "",
                name(item), Terminal.safe(title(item)), item.imageStatus == .none ? "" : item.imageStatus.rawValue,
            ].joined(separator: "\t")
        }
    }

    package static func name(_ item: StoredItem) -> String { Terminal.safe(item.feedName) }

    package static func title(_ item: StoredItem) -> String {
        item.title.isEmpty ? (item.link ?? item.key) : item.title
    }

    package static func padded(_ text: String, to width: Int) -> String {
        text + String(repeating: " ", count: max(0, width - Terminal.displayWidth(text)))
    }

    package static func jsonItem(_ detail: ItemDetail, _ rendered: RenderedText) -> String {
        var text = rendered.paragraphs.joined(separator: "\n\n")
        if !rendered.links.isEmpty { text += "\n\n" + rendered.references.joined(separator: "\n") }
        let pictures = detail.pictures.map { picture in
            "{\"url\": \(JSON.string(picture.url)), \"status\": \(JSON.string(picture.status.rawValue)), "
                + "\"path\": \(JSON.string(picture.path))}"
        }
        return "{" + ItemJSON.fields(detail.item, path: detail.item.picturePath, position: nil)
            + ", \"text\": \(JSON.string(text)), "
            + "\"content_html\": \(JSON.string(detail.content)), "
            + "\"content_source\": \(JSON.string(detail.contentSource)), \"summary\": \(JSON.string(detail.summary)), "
            + "\"article_error\": \(JSON.string(detail.articleError)), "
            + "\"pictures\": [\(pictures.joined(separator: ", "))]}"
    }

    package static func text(_ detail: ItemDetail, _ rendered: RenderedText, styled: Bool) -> String {
        let item = detail.item
        let width = max(20, min(Terminal.width, 100))
        var lines = Terminal.wrap(Terminal.safe(item.title.isEmpty ? "(no title)" : item.title), width: width)
        var about = Terminal.safe(item.feedName)
        if let author = detail.item.author { about += " · " + Terminal.safe(author) }
        if !detail.item.categories.isEmpty {
            about += " · " + Terminal.safe(detail.item.categories.joined(separator: ", "))
        }
        if item.starred { about += " · starred" }
        if let date = item.published.flatMap({ LocalTime.string($0, time: true) }) { about += " · " + date }
        lines.append(about)
        if let link = item.link { lines.append(Terminal.safe(link)) }
        switch item.imageStatus {
        case .none: break
        case .cached: lines.append("picture: " + Terminal.safe(item.picturePath ?? ""))
        case .pending, .failed: lines.append("picture: \(item.imageStatus.rawValue)")
        }
        if !detail.pictures.isEmpty {
            let cached = detail.pictures.filter { $0.status == .cached }.count
            lines.append("pictures: \(cached) of \(detail.pictures.count) cached")
        }
        for file in item.enclosures {
            let about = Words.about(file)
            lines.append("enclosure: " + Terminal.safe(file.url) + (about.isEmpty ? "" : " (\(Terminal.safe(about)))"))
        }
        if detail.contentSource == "page" {
            lines.append("article: from the page")
            if let summary = detail.summaryBesideArticle {
                lines.append("")
                lines += Terminal.wrap("Summary: " + Terminal.safe(summary), width: width)
            }
        } else if let error = detail.articleError {
            lines.append("article: none yet (\(Terminal.safe(error)))")
        }
        if !rendered.blocks.isEmpty {
            lines.append("")
            lines += TextLayout.lines(rendered, width: width, styled: styled)
        }
        if !rendered.links.isEmpty {
            lines.append("")
            lines += rendered.references.map(Terminal.safe)
        }
        return lines.joined(separator: "\n")
    }

    /// `extract --json`'s article, with the pictures it shows.
    package static func articleJSON(_ article: ExtractedArticle, pictures: [String]) -> String {
        """
        {"title": \(JSON.string(article.title)), "byline": \(JSON.string(article.byline)), \
        "published": \(JSON.string(article.published)), "lang": \(JSON.string(article.lang)), \
        "excerpt": \(JSON.string(article.excerpt)), "site_name": \(JSON.string(article.siteName)), \
        "readerable": \(article.readerable), "content": \(JSON.string(article.safeContent)), \
        "text": \(JSON.string(article.text)), \
        "pictures": [\(pictures.map(JSON.string).joined(separator: ", "))]}
        """
    }

    /// `extract`'s article as text: its title, byline and date, its paragraphs wrapped.
    package static func articleText(_ article: ExtractedArticle) -> String {
        var lines: [String] = []
        if let title = article.title { lines.append(Terminal.safe(title)) }
        let about = [article.byline, article.published].compactMap { $0 }.map(Terminal.safe)
        if !about.isEmpty { lines.append(about.joined(separator: " · ")) }
        let width = max(20, min(Terminal.width, 100))
        for paragraph in article.text.split(separator: "\n\n") {
            lines.append("")
            lines += Terminal.wrap(Terminal.safe(String(paragraph)), width: width)
        }
        return lines.joined(separator: "\n")
    }
}
