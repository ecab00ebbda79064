import FeedSyncKit
import Foundation

/// The feeds and accounts in words and in JSON, as `feeds` and `status` print them.
package enum FeedWords {
    /// One line naming the feeds that publish summaries only and the command that fetches more.
    package static func hint(_ feeds: [Int64]) -> String? {
        guard let first = feeds.first else { return nil }
        let which =
            feeds.count == 1
            ? "feed \(first) publishes" : "feeds \(feeds.map(String.init).joined(separator: ", ")) publish"
        return "hint: \(which) summaries only; feedsync full-text \(first) on fetches each item's whole article"
    }

    package static func jsonList(_ summaries: [FeedSummary], accounts: [Int64: Account], teasers: Set<Int64>) -> String
    {
        let feeds = summaries.map { summary in
            let feed = summary.feed
            let account = feed.accountID.flatMap { accounts[$0] }
            return """
                {"number": \(feed.id), "title": \(JSON.string(feed.name)), "url": \(JSON.string(feed.url)), \
                "account": \(JSON.string(account?.name)), "source_url": \(JSON.string(feed.sourceURL)), \
                "full_text": \(feed.fullText), "summaries_only": \(teasers.contains(feed.id)), \
                "folder": \(JSON.string(feed.folder)), "items": \(summary.items), "unread": \(summary.unread), \
                "last_pull": \(JSON.string(feed.lastPullAt.map(iso))), \
                "outcome": \(JSON.string(feed.lastOutcome?.rawValue)), \
                "due_at": \(JSON.string(feed.dueAt.map(iso))), "due_reason": \(JSON.string(feed.dueReason)), \
                \(nextAttempt(feed)), "gone": \(feed.goneAt != nil)}
                """
        }
        return "{\"feeds\": [\(feeds.joined(separator: ", "))]}"
    }

    /// One line a feed, in aligned columns: number, name, items, unread, the last pull, and the
    /// URL last (where a terminal too narrow cuts it), when it is not the name.
    package static func text(_ summaries: [FeedSummary], accounts: [Int64: Account]) -> String {
        guard !summaries.isEmpty else { return "no feeds subscribed; add one with: feedsync add URL" }
        // The folder is a column when a feed is in one.
        let filed = summaries.contains { $0.feed.folder != nil }
        // Each feed's columns with the cells each takes, then its URL; the lines are written into
        // one string, each column padded to its widest.
        let rows = summaries.map { summary -> (columns: [(text: String, cells: Int)], url: String?) in
            let feed = summary.feed
            var pulled: String
            if let account = feed.accountID.flatMap({ accounts[$0] }) {
                let synced =
                    account.lastSyncAt.map { "synced \(relative($0)), \(FeedWords.words(account.lastOutcome))" }
                    ?? "not synced yet"
                pulled = "account \(Terminal.safe(account.name)), \(synced)"
            } else {
                pulled = feed.lastPullAt.map { "\(relative($0)), \(FeedWords.words(feed))" } ?? "never pulled"
                if feed.goneAt != nil { pulled += ", gone (410), not asked again" }
                if let stop = feed.historyStop { pulled += "; " + Terminal.safe(stop) }
            }
            var columns = [
                String(feed.id), Terminal.truncate(Terminal.safe(feed.name), toCells: 40), "\(summary.items) items",
                "\(summary.unread) unread", pulled,
            ]
            if filed { columns.insert(Terminal.truncate(Terminal.safe(feed.folder ?? "-"), toCells: 24), at: 2) }
            // An account's feed by its own address, not the account's URL it is stored under.
            let url = feed.accountID == nil ? feed.url : feed.sourceURL ?? ""
            return (columns.map { ($0, Terminal.displayWidth($0)) }, feed.name == url ? nil : Terminal.safe(url))
        }
        let widths = rows[0].columns.indices.map { column in rows.lazy.map { $0.columns[column].cells }.max() ?? 0 }
        let rightAligned = [true, false] + (filed ? [false] : []) + [true, true, false]
        // As bytes: String's appends cost a hundred times more a byte here (measured).
        var out: [UInt8] = []
        out.reserveCapacity(rows.count * (widths.reduce(8, +) + 60))
        for (index, row) in rows.enumerated() {
            if index > 0 { out.append(0x0A) }
            for (column, (text, cells)) in row.columns.enumerated() {
                if column > 0 { out += [0x20, 0x20] }
                let pad = repeatElement(UInt8(0x20), count: widths[column] - cells)
                if rightAligned[column] { out += pad }
                out += text.utf8
                if !rightAligned[column] { out += pad }
            }
            if let url = row.url { out += "  \(url)".utf8 }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// A feed's last pull's outcome in words: what failed, when it did (`failed: it answered 404
    /// Not Found`), cut short.
    package static func words(_ feed: Feed) -> String {
        guard feed.lastOutcome == .data || feed.lastOutcome == .transient, let error = feed.lastError else {
            return words(feed.lastOutcome)
        }
        return Terminal.truncate("failed: " + Terminal.safe(Words.failure(error, url: feed.url)), toCells: 60)
    }

    /// A pull's outcome in words.
    package static func words(_ outcome: PullOutcome?) -> String {
        switch outcome {
        case .ok?: "ok"
        case .transient?: "failed for now"
        case .data?: "the server sent unusable data"
        case .local?: "a local failure"
        case nil: "never pulled"
        }
    }

    package static func text(_ account: (account: Account, queued: Int)) -> String {
        let (account, queued) = account
        var lines = [Terminal.safe("account \(account.name) (\(account.user) at \(account.url))")]
        let cursor = account.cursor
        lines.append(
            "  articles:      "
                + (cursor.backfillDone
                    ? "all stored"
                    : cursor.backfillPlace == nil
                        ? "none yet; the next pull walks them all"
                        : "some stored so far; the next sync goes on from there"))
        lines.append(
            Self.last(
                "last sync", account.lastSyncAt, account.lastOutcome, account.lastError,
                never: "never; the next pull syncs it"))
        lines.append("  marks waiting: \(queued == 0 ? "none" : "\(queued), sent at the next sync")")
        return lines.joined(separator: "\n")
    }

    package static func jsonAccount(_ account: (account: Account, queued: Int)) -> String {
        let (account, queued) = account
        return """
            {"name": \(JSON.string(account.name)), "kind": \(JSON.string(account.kind)), \
            "url": \(JSON.string(account.url)), "user": \(JSON.string(account.user)), \
            "all_stored": \(account.cursor.backfillDone), \
            "last_sync": \(JSON.string(account.lastSyncAt.map(iso))), \
            "outcome": \(JSON.string(account.lastOutcome?.rawValue)), "error": \(JSON.string(account.lastError)), \
            "marks_waiting": \(queued)}
            """
    }

    /// "  last pull:     2 minutes ago, ok" (and its error), or `never` when there was none.
    package static func last(_ label: String, _ at: Date?, _ outcome: PullOutcome?, _ error: String?, never: String)
        -> String
    {
        let start = "  \(label):" + String(repeating: " ", count: max(1, 14 - label.count))
        guard let at else { return start + never }
        return start + "\(relative(at)), \(FeedWords.words(outcome))" + (error.map { ": \(Terminal.safe($0))" } ?? "")
    }

    /// When a plain pull asks for the feed next, and why: "at the next pull" only when it will.
    package static func due(_ feed: Feed, now: Date = Date()) -> String {
        let reason = feed.dueReason.map { " (\(Terminal.safe($0)))" } ?? ""
        guard let next = feed.nextAsk, next > now else { return "at the next pull" + reason }
        if let retry = feed.nextRetryAt, retry >= next {
            return "from \(LocalTime.short(next)), as the server asked (Retry-After; only --force asks before)"
        }
        return "the first pull from \(LocalTime.short(next))" + reason
    }

    package static func backfill(_ cursor: FeedCursor) -> String {
        switch cursor.backfillNext {
        case .newItemsOnly(let note): note.map { "ended: \(Terminal.safe($0))" } ?? "complete"
        case .firstPage, .newItems: "not started"
        case .backfill(let page, let url?, _): "next document \(page), \(Terminal.safe(url))"
        case .backfill(let page, nil, let pages): "next page \(page)" + (pages.map { " of \($0)" } ?? "")
        }
    }

    package static func text(_ status: FeedStatus, articles: ArticleCounts?, teaser: Bool = false) -> String {
        let feed = status.feed
        var lines = [Terminal.safe(feed.name == feed.url ? feed.url : "\(feed.name) (\(feed.url))")]
        let format = feed.format.map {
            "\($0.rawValue) (\(feed.formatChosen ? "chosen with --format" : "found in its documents"))"
        }
        lines.append("  format:        \(format ?? "found at the first pull")")
        lines.append(
            "  items stored:  \(status.itemCount)" + (feed.cursor.remoteTotal.map { " (server reports \($0))" } ?? ""))
        lines.append("  backfill:      \(backfill(feed.cursor))")
        if feed.fullText {
            let counts = articles ?? ArticleCounts()
            var line = "  articles:      \(counts.stored) stored, \(counts.waiting) waiting"
            if counts.failed > 0 { line += ", \(counts.failed) without one (feedsync show N says why)" }
            lines.append(line)
        } else if teaser {
            lines.append(
                "  articles:      summaries only; feedsync full-text \(feed.id) on fetches each item's whole article")
        }
        if let stop = feed.historyStop {
            let again = feed.historyRetryAt.map {
                $0 > Date() ? "tried again from \(LocalTime.short($0))" : "tried again at the next pull"
            }
            lines.append("  history:       \(Terminal.safe(stop))" + (again.map { "; " + $0 } ?? ""))
        }
        lines.append(Self.last("last pull", feed.lastPullAt, feed.lastOutcome, feed.lastError, never: "never"))
        if let gone = feed.goneAt {
            lines.append(
                "  gone:          the server answered 410 Gone \(relative(gone)); not asked again, "
                    + "feedsync remove \(feed.id) clears it")
        } else {
            lines.append("  next pull:     \(Self.due(feed))")
        }
        if feed.failures > 0 {
            lines.append("  failures:      \(feed.failures) in a row; the next attempt waits longer after each")
        }
        if feed.unanswered > 0 {
            lines.append(
                "  no answer:     \(feed.unanswered) pull\(feed.unanswered == 1 ? "" : "s") in a row (the network, or the "
                    + "host); asked at every pull until the \(FeedSync.unansweredWithoutWait + 1)th, then less often")
        }
        if let from = feed.movedFrom {
            lines.append(
                "  moved:         from \(Terminal.safe(from)) \(feed.movedAt.map { relative($0) } ?? ""), "
                    + "a permanent redirect seen on two pulls in a row")
        }
        if let target = feed.redirectURL {
            lines.append(
                "  redirected:    permanently to \(Terminal.safe(target)) at the last pull; "
                    + "the URL moves there if the next pull is redirected too")
        }
        if let malformed = feed.malformed {
            lines.append("  malformed:     \(Terminal.safe(malformed)); its items were read past the damage")
        }
        let pictures = [PictureStatus.cached, .pending, .failed].map {
            "\($0.rawValue) \(status.pictures[$0]?.count ?? 0)"
        }
        let bytes = status.pictures[.cached]?.bytes ?? 0
        lines.append(
            "  pictures:      \(pictures.joined(separator: ", ")) (\(ByteSize.format(Double(bytes))) cached)")
        lines.append("  no picture:    \(status.pictures[.none]?.count ?? 0) items")
        return lines.joined(separator: "\n")
    }

    package static func jsonFeed(_ status: FeedStatus, articles: ArticleCounts?) -> String {
        let feed = status.feed
        let cursor = feed.cursor
        let pictures = PictureStatus.allCases.map { "\(JSON.string($0.rawValue)): \(status.pictures[$0]?.count ?? 0)" }
        return """
            {"url": \(JSON.string(feed.url)), "format": \(JSON.string(feed.format?.rawValue)), \
            "format_chosen": \(feed.formatChosen), \
            "items": \(status.itemCount), \
            "remote_total": \(JSON.number(cursor.remoteTotal)), \
            "backfill": {"done": \(cursor.backfillDone), "note": \(JSON.string(cursor.backfillNote)), \
            "stopped": \(JSON.string(feed.historyStop)), "retry_at": \(JSON.string(feed.historyRetryAt.map(iso))), \
            "next_page": \(JSON.number(cursor.backfillDone ? nil : cursor.backfillPage)), \
            "next_url": \(JSON.string(cursor.backfillDone ? nil : cursor.backfillURL))}, \
            "last_pull_at": \(JSON.string(feed.lastPullAt.map(iso))), \
            "last_outcome": \(JSON.string(feed.lastOutcome?.rawValue)), \
            "last_error": \(JSON.string(feed.lastError)), \
            "next_retry_at": \(JSON.string(feed.nextRetryAt.map(iso))), \
            "due_at": \(JSON.string(feed.dueAt.map(iso))), "due_reason": \(JSON.string(feed.dueReason)), \
            \(nextAttempt(feed)), \
            "failures": \(feed.failures), "unanswered": \(feed.unanswered), "gone_at": \(JSON.string(feed.goneAt.map(iso))), \
            "moved_from": \(JSON.string(feed.movedFrom)), "moved_at": \(JSON.string(feed.movedAt.map(iso))), \
            "redirect_url": \(JSON.string(feed.redirectURL)), \
            "malformed": \(JSON.string(feed.malformed)), \
            "pictures": {\(pictures.joined(separator: ", ")), "cached_bytes": \(status.pictures[.cached]?.bytes ?? 0)}, \
            "full_text": \(feed.fullText), "articles": \(articles.map {
                "{\"stored\": \($0.stored), \"waiting\": \($0.waiting), \"failed\": \($0.failed)}" } ?? "null")}
            """
    }

    /// `"next_attempt_at"` (from when a plain pull asks the feed: now, when the next one does; null:
    /// never, it is gone) and `"due_now"`, for `status --json` and `feeds --json`.
    package static func nextAttempt(_ feed: Feed, now: Date = Date()) -> String {
        let next = feed.nextAsk.map { max($0, now) }
        return "\"next_attempt_at\": \(JSON.string(next.map(iso))), \"due_now\": \(next == now)"
    }
}
