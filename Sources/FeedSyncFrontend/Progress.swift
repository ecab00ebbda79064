import ArgumentParser
import FeedSyncKit
import Foundation
import Synchronization

package enum ByteSize {
    /// `812 B`, `64 KB`, `3.5 MB`: for people, in the progress line, summaries and `status`.
    package static func format(_ bytes: Double) -> String { Words.bytes(bytes) }

    /// `123`, `64K`, `500M`, `2G` (powers of 1024; a trailing `B` or `iB` is accepted).
    package static func parse(_ text: String) throws -> Int64 {
        var digits = text.trimmingCharacters(in: .whitespaces).uppercased()
        for suffix in ["IB", "B"] where digits.hasSuffix(suffix) && digits.count > suffix.count {
            digits.removeLast(suffix.count)
            break
        }
        var multiplier: Int64 = 1
        if let last = digits.last, let power = ["K": 1, "M": 2, "G": 3, "T": 4][String(last)] {
            multiplier = Int64(1) << (10 * power)
            digits.removeLast()
        }
        guard let value = Double(digits), value >= 0, value * Double(multiplier) < 9e18 else {
            throw ValidationError("\(String(reflecting: text)) is not a size; write e.g. 500M or 2G")
        }
        return Int64(value * Double(multiplier))
    }
}

/// The live progress line of a pull on a terminal: the feed being fetched, pages, items,
/// pictures and article pages, every byte and the rate, and a retry while it waits. It never
/// wraps: a wrapped line cannot be erased, and leaves stale lines.
package final class ProgressLine: Sendable {
    private struct Counts {
        var pages = 0
        var items = 0
        var picturesDone = 0
        var picturesQueued = 0
        var articlesDone = 0
        var articlesPlanned = 0
        /// Every body received: feed pages, pictures, article pages.
        var bytes = 0
        /// The feed waiting to retry and what it waits for, until its next page.
        var retry: (url: String, text: String)?
        /// The feeds whose pages are being fetched, in the order they started, and the bytes of
        /// each one's body so far.
        var fetching: [(url: String, bytes: Int)] = []
        var lastDraw = Date.distantPast
        var drawn = false
    }
    private let counts = Mutex(Counts())
    private let started = Date()
    /// The feeds' titles by URL, for naming the feed being fetched (its host where none is known).
    private let names: [String: String]

    package init(names: [String: String] = [:]) {
        self.names = names
    }

    private func name(_ url: String) -> String {
        names[url] ?? URLComponents(string: url)?.host ?? url
    }

    package func record(_ event: PullEvent) {
        switch event {
        case .page(let url, _, _, let new, _, _):
            update {
                $0.pages += 1
                $0.items += new
                if $0.retry?.url == url { $0.retry = nil }
                $0.fetching.removeAll { $0.url == url }
            }
        case .fetching(let url):
            // At once: a slow server is named from its first second.
            update(force: true) { counts in
                if !counts.fetching.contains(where: { $0.url == url }) { counts.fetching.append((url, 0)) }
            }
        case .receiving(let url, let bytes):
            update { counts in
                if let index = counts.fetching.firstIndex(where: { $0.url == url }) {
                    counts.fetching[index].bytes = bytes
                }
            }
        case .fetched(let url, let bytes):
            update { counts in
                counts.bytes += bytes
                if let index = counts.fetching.firstIndex(where: { $0.url == url }) { counts.fetching[index].bytes = 0 }
            }
        case .retrying(let url, let attempt, let delay, _):
            let text = "\(name(url)): retry \(attempt) in \(String(format: "%.0f", delay)) s"
            update(force: true) { $0.retry = (url, text) }
        default:
            break
        }
    }

    /// A feed's pull ended: it is fetched no more.
    package func finished(_ url: String) {
        update { $0.fetching.removeAll { $0.url == url } }
    }

    package func record(_ event: PictureEvent) {
        update { counts in
            switch event {
            case .planned(let queued, _): counts.picturesQueued = queued
            case .cached(_, let bytes, _):
                counts.picturesDone += 1
                counts.bytes += bytes
                counts.picturesQueued = max(0, counts.picturesQueued - 1)
            case .failed: counts.picturesQueued = max(0, counts.picturesQueued - 1)
            case .evicted, .localFault: break
            }
        }
    }

    package func record(_ event: ArticleEvent) {
        update { counts in
            switch event {
            case .planned(let count): counts.articlesPlanned += count
            case .fetched(let bytes):
                counts.articlesDone += 1
                counts.bytes += bytes
            case .kept: break
            }
        }
    }

    private func update(force: Bool = false, _ change: (inout Counts) -> Void) {
        let line: String? = counts.withLock { counts in
            change(&counts)
            let now = Date()
            guard force || now.timeIntervalSince(counts.lastDraw) >= 0.1 else { return nil }
            counts.lastDraw = now
            counts.drawn = true
            let bytes = counts.bytes + counts.fetching.reduce(0) { $0 + $1.bytes }
            let rate = Double(bytes) / max(0.001, now.timeIntervalSince(started))
            var parts = ["pages \(counts.pages)", "items \(counts.items)"]
            if counts.picturesDone + counts.picturesQueued > 0 {
                parts.append("pictures \(counts.picturesDone) done, \(counts.picturesQueued) queued")
            }
            if counts.articlesPlanned > 0 {
                parts.append("articles \(counts.articlesDone) of \(counts.articlesPlanned)")
            }
            parts += [ByteSize.format(Double(bytes)), ByteSize.format(rate) + "/s"]
            // What is being fetched and a wait are news: first, where a narrow terminal still
            // shows them.
            if let first = counts.fetching.first {
                var fetching = "fetching " + name(first.url)
                if first.bytes > 0 { fetching += " (\(ByteSize.format(Double(first.bytes))))" }
                if counts.fetching.count > 1 { fetching += " +\(counts.fetching.count - 1)" }
                parts.insert(fetching, at: 0)
            }
            if let retry = counts.retry { parts.insert(retry.text, at: 0) }
            return Terminal.truncate(
                Terminal.safe(parts.joined(separator: " · ")), toCells: max(10, Terminal.width - 1))
        }
        if let line { Output.attempt("\r\u{1B}[K\(line)") }
    }

    /// Erases the line, before other output.
    package func clear() {
        if counts.withLock({ $0.drawn }) { Output.attempt("\r\u{1B}[K") }
    }
}
