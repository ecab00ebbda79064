import ArgumentParser
import FeedSyncFrontend
import FeedSyncKit
import Foundation

struct Status: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",  // named here, not derived from the type's name at every start
        abstract: "Show each feed's items, backfill progress, last pull and pictures; each account's sync.")

    @OptionGroup var homeOptions: HomeOptions

    @Flag(help: "Print JSON instead of text.")
    var json = false

    func run() async throws {
        let library = try await homeOptions.open(.reading)
        // An account's feeds are synced with it: they are shown under it, not one by one.
        let feeds = try await fail(on: { try await library.status() }).filter { $0.feed.accountID == nil }
        var accounts: [(account: Account, queued: Int)] = []
        for account in try await fail(on: { try await library.accounts() }) {
            accounts.append((account, try await fail(on: { try await library.queuedMarks(account).count })))
        }
        let articles = try await fail { try await library.articleCounts() }
        let teasers = try await fail { try await library.summaryOnlyFeeds() }
        if json {
            try Output.line(
                "{\"feeds\": [\(feeds.map { jsonFeed($0, articles: articles[$0.feed.id]) }.joined(separator: ", "))], "
                    + "\"accounts\": [\(accounts.map(jsonAccount).joined(separator: ", "))]}")
        } else if feeds.isEmpty, accounts.isEmpty {
            try Output.line("no feeds yet; subscribe with: feedsync add URL")
        } else {
            try Output.wrapped(
                (accounts.map(text)
                    + feeds.map { text($0, articles: articles[$0.feed.id], teaser: teasers.contains($0.feed.id)) })
                    .joined(separator: "\n\n"))
        }
    }

    func text(_ account: (account: Account, queued: Int)) -> String {
        let (account, queued) = account
        var lines = [Terminal.safe("account \(account.name) (\(account.user) at \(account.url))")]
        let cursor = account.cursor
        lines.append(
            "  articles:      "
                + (cursor.backfillDone
                    ? "all stored" : "\(cursor.backfillSkip) stored so far; the next sync goes on from there"))
        lines.append(
            Self.last(
                "last sync", account.lastSyncAt, account.lastOutcome, account.lastError,
                never: "never; the next pull syncs it"))
        lines.append("  marks waiting: \(queued == 0 ? "none" : "\(queued), sent at the next sync")")
        return lines.joined(separator: "\n")
    }

    func jsonAccount(_ account: (account: Account, queued: Int)) -> String {
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
    static func last(_ label: String, _ at: Date?, _ outcome: PullOutcome?, _ error: String?, never: String) -> String {
        let start = "  \(label):" + String(repeating: " ", count: max(1, 14 - label.count))
        guard let at else { return start + never }
        return start + "\(relative(at)), \(Feeds.words(outcome))" + (error.map { ": \(Terminal.safe($0))" } ?? "")
    }

    /// When a plain pull asks for the feed next, and why: "at the next pull" only when it will.
    static func due(_ feed: Feed, now: Date = Date()) -> String {
        let reason = feed.dueReason.map { " (\(Terminal.safe($0)))" } ?? ""
        guard let next = feed.nextAsk, next > now else { return "at the next pull" + reason }
        if let retry = feed.nextRetryAt, retry >= next {
            return "from \(LocalTime.short(next)), as the server asked (Retry-After; only --force asks before)"
        }
        return "the first pull from \(LocalTime.short(next))" + reason
    }

    func backfill(_ cursor: FeedCursor) -> String {
        switch cursor.backfillNext {
        case .newItemsOnly(let note): note.map { "ended: \(Terminal.safe($0))" } ?? "complete"
        case .firstPage, .newItems: "not started"
        case .backfill(let page, let url?, _): "next document \(page), \(Terminal.safe(url))"
        case .backfill(let page, nil, let pages): "next page \(page)" + (pages.map { " of \($0)" } ?? "")
        }
    }

    func text(_ status: FeedStatus, articles: ArticleCounts?, teaser: Bool = false) -> String {
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

    func jsonFeed(_ status: FeedStatus, articles: ArticleCounts?) -> String {
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
}

/// `"next_attempt_at"` (from when a plain pull asks the feed: now, when the next one does; null:
/// never, it is gone) and `"due_now"`, for `status --json` and `feeds --json`.
func nextAttempt(_ feed: Feed, now: Date = Date()) -> String {
    let next = feed.nextAsk.map { max($0, now) }
    return "\"next_attempt_at\": \(JSON.string(next.map(iso))), \"due_now\": \(next == now)"
}
