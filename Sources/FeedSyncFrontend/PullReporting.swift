import FeedSyncKit
import Synchronization

/// What a pull shows while it runs: the progress line, a failed feed at once, the run's local
/// fault once (the pull goes on, and exits 74), every event with `--verbose`.
package final class PullReporting: Sendable {
    package let progress: ProgressLine?
    let verbose: Bool
    /// The sentence said as a feed fails (nil: nothing), as it happens.
    let failure: @Sendable (Feed, SyncError) -> String?
    /// The sentences of feeds no server answered, said at the end unless the run was offline.
    private let unanswered = Mutex<[String]>([])

    package init(
        progress: ProgressLine?, verbose: Bool,
        failure: @escaping @Sendable (Feed, SyncError) -> String? = { $1.message }
    ) {
        self.progress = progress
        self.verbose = verbose
        self.failure = failure
    }

    package func update(_ update: PullUpdate) {
        switch update {
        case .article(let event):
            progress?.record(event)
            if verbose, case .kept(let itemID, let failure) = event {
                Output.error(
                    "feedsync: item \(itemID): "
                        + (failure.map { "no article: \(Terminal.safe($0))" } ?? "article stored"))
            }
        case .feed(let event):
            progress?.record(event)
            if verbose { PullWords.log(event) }
        case .picture(let event):
            progress?.record(event)
            if verbose { PullWords.log(event) }
        case .localFault(let reason):
            progress?.clear()
            complain(reason)
        case .finished(_, let feed, let report):
            progress?.finished(report.url)
            // Interrupted: said once, after; a local fault is the run's, said once as it happened.
            guard let error = report.error, !Task.isCancelled, error.kind != .local else { return }
            guard let sentence = failure(feed, error) else { return }
            if report.unanswered {
                unanswered.withLock { $0.append(sentence) }
                return
            }
            progress?.clear()
            complain(sentence)
        }
    }

    /// At the run's end, what no server answered: one sentence when the whole run was offline
    /// (`offline` feeds), naming the hosts that gave no answer and how; else each feed's.
    package func sayUnanswered(offline: Int?, silent: [Silence]) {
        let sentences = unanswered.withLock { $0 }
        if let offline {
            complain(Self.offlineLine(feeds: offline, silent: silent))
        } else {
            sentences.forEach(complain)
        }
    }

    /// "offline: no server answered (4 feeds): a.example (no such host), … and 1 more; …", or,
    /// when one host was all the run asked, that this server may be down.
    static func offlineLine(feeds: Int, silent: [Silence]) -> String {
        let counted = "\(feeds) feed\(feeds == 1 ? "" : "s")"
        let end = "; nothing changed; the next pull continues"
        if silent.count == 1, let only = silent.first {
            return "offline: \(only.host) did not answer (\(only.how); \(counted)): this server may be down, "
                + "or this machine offline" + end
        }
        let named = silent.prefix(3).map { "\($0.host) (\($0.how))" }.joined(separator: ", ")
        let more = silent.count > 3 ? " and \(silent.count - 3) more" : ""
        return "offline: no server answered (\(counted))" + (named.isEmpty ? "" : ": " + named + more) + end
    }
}

extension PullWords {
    /// "12 pictures (240 KB)", with failures; nil when none.
    package static func pictures(_ tally: PictureTally) -> String? {
        guard tally.count + tally.failed > 0 else { return nil }
        var text = "\(tally.count) picture\(tally.count == 1 ? "" : "s") (\(ByteSize.format(Double(tally.bytes))))"
        if tally.failed > 0 { text += ", \(tally.failed) failed" }
        return text
    }

    /// "articles: 12 stored, 1 not", or nil when no page was fetched.
    package static func articles(_ tally: ArticleTally) -> String? {
        guard tally.stored + tally.failed > 0 else { return nil }
        return "articles: \(tally.stored) stored"
            + (tally.failed > 0 ? ", \(tally.failed) not (feedsync status says why)" : "")
    }
}
