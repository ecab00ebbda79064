import FeedSyncKit
import Foundation

/// What a pull says, in every front end that pulls: a feed's line, its failure and its fix, the
/// run's line, the events `--verbose` logs, where an interrupted pull goes on.
package enum PullWords {
    /// Whether a feed's pull is worth a line of its own: it brought items, or something changed
    /// that the reader should know (gone, moved, an endless feed stopped, the history stopped).
    package static func isNews(_ report: PullReport) -> Bool {
        if report.newItems > 0 || report.gone || report.movedTo != nil || report.history != nil { return true }
        switch report.finish {
        case .budgetSpent?, .endless?: return true
        default: return false
        }
    }
    /// A feed's failure as said the moment it happens: the feed by number and title, what went
    /// wrong, and what to do about it.
    package static func failure(_ feed: Feed, _ error: SyncError) -> String? {
        let what = Words.failure(error.message, url: feed.url)
        var fix: String?
        switch error.kind {
        case .data where !what.contains("nothing was subscribed"):
            fix = "if it moved, feedsync remove \(feed.id) and add its new address"
        case .transient where what.contains("asked to wait"):
            fix = "feedsync pull --force asks anyway"
        case .transient where !what.contains("next pull"):
            fix = "the next pull tries again"
        default: break
        }
        return "\(feed.id) \(feed.name): \(what)" + (fix.map { "; " + $0 } ?? "")
    }
    /// The run in one line: how many feeds were asked, what they brought, what failed, the
    /// pictures, and when a feed is due next.
    package struct RunTally {
        package var asked = 0
        package var withNews = 0
        package var newItems = 0
        package var failed = 0
        package var notDue = 0
        package var nextDue: Date?
        var pictures = 0
        var pictureBytes = 0

        package mutating func count(_ report: PullReport) {
            guard report.skipped == nil else {
                notDue += 1
                return
            }
            asked += 1
            if report.error != nil { failed += 1 }
            if report.newItems > 0 { withNews += 1 }
            newItems += report.newItems
            pictures += report.pictures.count
            pictureBytes += report.pictures.bytes
            if let due = report.due?.at { nextDue = min(nextDue ?? due, due) }
        }

        package init() {}

        package func line() -> String {
            var parts = ["\(asked) feed\(asked == 1 ? "" : "s") asked"]
            parts.append(
                newItems == 0
                    ? "no new items"
                    : "\(newItems) new item\(newItems == 1 ? "" : "s") from \(withNews)")
            if failed > 0 { parts.append("\(failed) failed") }
            if notDue > 0 { parts.append("\(notDue) not due") }
            if pictures > 0 {
                parts.append(
                    "\(pictures) picture\(pictures == 1 ? "" : "s") (\(ByteSize.format(Double(pictureBytes))))")
            }
            var line = parts.joined(separator: ", ")
            if let nextDue { line += "; next due \(LocalTime.short(nextDue))" }
            return line
        }
    }
    /// What a plain pull that asked no feed says on a terminal: how many, which is due first, and
    /// how to ask anyway.
    package static func nothingDue(_ feeds: [Feed]) -> String {
        let waiting = feeds.compactMap { feed in feed.nextAsk.map { (feed, $0) } }
        guard let (first, at) = waiting.min(by: { $0.1 < $1.1 }) else {
            return "nothing to pull: every feed is gone (410); feedsync remove clears them"
        }
        let count = feeds.count == 1 ? "the feed is" : "none of the \(feeds.count) feeds is"
        return "nothing to pull: \(count) due yet; the first, \(Terminal.safe(first.name)), "
            + "from \(LocalTime.short(at)); feedsync pull --force asks now"
    }
    /// Where the next pull of `feeds` continues, in words.
    package static func resumption(of feeds: [Feed], in library: FeedSync) async -> String {
        switch await library.resumption(of: feeds) {
        case nil: "the next pull continues each feed from where this one stopped"
        case .newItems(let page)?: "the next pull continues from page \(page) of the new items"
        case .newItemsOnly?: "the next pull looks for new items"
        case .firstPage?: "the next pull continues from page 1"
        case .backfill(let page, _, _)?: "the next pull continues from page \(page)"
        }
    }
    package static func summary(_ report: PullReport, name: String? = nil, pictures: String? = nil) -> String {
        let url = Terminal.safe(name ?? report.url)
        if let skip = report.skipped { return "\(url): \(words(skip))" }
        if report.gone {
            return "\(url): gone (410): the publisher removed it; it is not asked again, feedsync remove clears it"
        }
        let requests = report.requests.count
        var line =
            "\(url): \(report.newItems) new item\(report.newItems == 1 ? "" : "s"), "
            + "\(requests) request\(requests == 1 ? "" : "s")" + (pictures.map { ", " + $0 } ?? "")
        switch report.finish {
        case .budgetSpent: line += "; --max-pages reached, the next pull continues"
        case .endless(let reason): line += "; stopped an endless feed (\(reason))"
        default: break
        }
        if let history = report.history { line += "; " + Terminal.safe(history) }
        if let moved = report.movedTo { line += "; moved for good to \(Terminal.safe(moved))" }
        if let due = report.due { line += "; due \(LocalTime.short(due.at)), \(due.reason)" }
        return line
    }
    /// Why a feed was not asked: "skipped, due 14:05, ttl 60 min".
    package static func words(_ skip: PullSkip) -> String {
        switch skip {
        case .gone(let at): "skipped, gone since \(LocalTime.short(at)) (410); feedsync remove clears it"
        case .retryAfter(let until): "skipped, the server asked to wait until \(LocalTime.short(until)) (Retry-After)"
        case .notDue(let due, let reason):
            "skipped, due \(LocalTime.short(due))" + (reason.isEmpty ? "" : ", \(reason)")
        }
    }
    package static func log(_ event: PictureEvent) {
        let line: String
        switch event {
        case .failed(let url, let reason, _): line = "picture \(url): \(reason)"
        case .evicted(let count, let bytes): line = "evicted \(count) pictures (\(bytes) bytes) to fit the cache size"
        case .planned, .cached, .localFault: return
        }
        Output.error(Terminal.safe(line))
    }
    package static func log(_ event: PullEvent) {
        let line: String =
            switch event {
            case .notModified(let url): "\(url): not modified"
            case .unchanged(let url): "\(url): the same document as last time; not read again"
            case .page(let url, let number, let items, let new, _, let skipped):
                "\(url): page \(number), \(items) items, \(new) new"
                    + (skipped > 0 ? ", \(skipped) skipped (no usable id, or an id or URL over its limit)" : "")
            case .retrying(let url, let attempt, let delay, let reason):
                "\(url): \(reason); retry \(attempt) in \(String(format: "%.1f", delay)) s"
            case .skipped(let url, let skip): "\(url): \(words(skip))"
            case .endless(let url, let reason): "\(url): stopped an endless feed: \(reason)"
            case .linkRefused(let url, let status):
                "\(url): answered \(status) to a saved link; starting again from the head"
            case .malformed(let url, let place):
                "\(url): not well-formed at \(place); the items around the damage were read"
            case .fetching, .receiving, .fetched: ""  // the progress line's
            }
        guard !line.isEmpty else { return }
        Output.error(Terminal.safe(line))
    }
}
