import FeedSyncFrontend
import FeedSyncKit
import Synchronization

/// What a pull shows while it runs: the progress line, a failed feed at once, every event with
/// `--verbose`, and the first local fault (the pull goes on, and exits 74).
final class PullReporting: Sendable {
    let progress: ProgressLine?
    let verbose: Bool
    /// The sentence said as a feed fails (nil: nothing), as it happens.
    let failure: @Sendable (Feed, SyncError) -> String?
    private let localFault = Mutex<String?>(nil)
    /// The sentences of feeds no server answered, said at the end unless the run was offline.
    private let unanswered = Mutex<[String]>([])
    /// Pictures stored and failed per feed, for the summaries.
    private let pictures = Mutex<[Int64: PictureTally]>([:])
    /// Articles stored and not, from full-text feeds' pages.
    private let articles = Mutex((stored: 0, failed: 0))

    init(
        progress: ProgressLine?, verbose: Bool,
        failure: @escaping @Sendable (Feed, SyncError) -> String? = { $1.message }
    ) {
        self.progress = progress
        self.verbose = verbose
        self.failure = failure
    }

    var hadLocalFault: Bool { localFault.withLock { $0 != nil } }

    /// Pictures stored and failed per feed number.
    var tally: [Int64: PictureTally] { pictures.withLock { $0 } }

    /// "12 pictures (240 KB)", with failures, for the feed numbered `feedID`; nil when none.
    func pictures(of feedID: Int64) -> String? {
        guard let tally = pictures.withLock({ $0[feedID] }) else { return nil }
        var text = "\(tally.count) picture\(tally.count == 1 ? "" : "s") (\(ByteSize.format(Double(tally.bytes))))"
        if tally.failed > 0 { text += ", \(tally.failed) failed" }
        return text
    }

    /// "articles: 12 stored, 1 not", or nil when no page was fetched.
    var articleSummary: String? {
        let (stored, failed) = articles.withLock { $0 }
        guard stored + failed > 0 else { return nil }
        return "articles: \(stored) stored" + (failed > 0 ? ", \(failed) not (feedsync status says why)" : "")
    }

    func update(_ update: FeedSync.PullUpdate) {
        switch update {
        case .article(let event):
            progress?.record(event)
            guard case .kept(let itemID, let failure) = event else { return }
            articles.withLock { if failure == nil { $0.stored += 1 } else { $0.failed += 1 } }
            if verbose {
                Output.error(
                    "feedsync: item \(itemID): "
                        + (failure.map { "no article: \(Terminal.safe($0))" } ?? "article stored"))
            }
        case .feed(let event):
            progress?.record(event)
            if verbose { Pull.log(event) }
        case .picture(let event):
            switch event {
            case .cached(_, let bytes, let feedID):
                pictures.withLock {
                    $0[feedID, default: PictureTally()].count += 1
                    $0[feedID, default: PictureTally()].bytes += bytes
                }
            case .failed(_, _, let feedID): pictures.withLock { $0[feedID, default: PictureTally()].failed += 1 }
            default: break
            }
            if case .localFault(let reason) = event,
                localFault.withLock({ fault in
                    defer { fault = fault ?? reason }
                    return fault == nil
                })
            {
                progress?.clear()
                complain(reason)
            }
            progress?.record(event)
            if verbose { Pull.log(event) }
        case .finished(_, let feed, let report):
            progress?.finished(report.url)
            guard let error = report.error, !Task.isCancelled else { return }  // interrupted: said once, after
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
    func sayUnanswered(offline: Int?, silent: [Silence]) {
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

/// One feed's pictures in a pull.
struct PictureTally: Sendable {
    var count = 0
    var bytes = 0
    var failed = 0
}
