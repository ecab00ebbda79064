import FeedSyncKit
import Foundation
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

extension PullReporting {
    /// After the run, what it says: what no server answered, then on a terminal (`talk`) a line
    /// for each feed with news or trouble (each feed `named`, every feed with `--verbose`) and
    /// one for the run, or `--json`'s document; the worst failure, for the exit code.
    package func conclude(
        _ run: FeedSync.PullRun, started: Date, names: [Int64: String], talk: Bool, named: Bool, json: Bool
    ) throws -> SyncError.Kind? {
        let (feeds, outcomes) = (run.feeds, run.reports)
        let document = RunReport(
            started: started, feeds: feeds, reports: outcomes, accounts: run.accounts,
            accountReports: run.accountReports)
        let offline = outcomes.filter { $0?.offline == true }.count
        sayUnanswered(offline: offline > 0 ? offline : nil, silent: run.silent)
        if offline > 0 {
            if json { try Output.line(document.json) }
            return .transient
        }
        var worst: SyncError.Kind? = run.localFault != nil ? .local : nil
        // On a terminal a line for each feed with news or trouble (every feed with --verbose, and
        // each feed named), then one line for the run.
        var tally = PullWords.RunTally()
        for (feed, pulled) in zip(feeds, outcomes) {
            guard let pulled else { continue }
            tally.count(pulled)
            if let error = pulled.error {
                worst = max(worst ?? error.kind, error.kind)  // said as it happened
            } else if talk, named || pulled.skipped == nil && (verbose || PullWords.isNews(pulled)) {
                try Output.wrapped(
                    PullWords.summary(
                        pulled, name: names[feed.id] ?? feed.name, pictures: PullWords.pictures(pulled.pictures)))
            }
        }
        if talk, let articles = PullWords.articles(run.articles) { try Output.wrapped(articles) }
        for (account, synced) in zip(run.accounts, run.accountReports) {
            guard let synced else { continue }
            if let error = synced.error {
                complain("account \(account.name): \(error.message)")
                worst = max(worst ?? error.kind, error.kind)
            } else if talk {
                try Output.wrapped(
                    "account \(Terminal.safe(account.name)): \(synced.newItems) new, \(synced.requests.count) requests")
            }
        }
        if talk, !named, !feeds.isEmpty, run.accounts.isEmpty, outcomes.allSatisfy({ $0?.skipped != nil }) {
            try Output.wrapped(PullWords.nothingDue(feeds))
        } else if talk, !named, tally.asked > 0 {
            try Output.wrapped(tally.line())
        }
        if json { try Output.line(document.json) }
        return worst
    }
}
