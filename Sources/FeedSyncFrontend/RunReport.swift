import FeedSyncKit
import Foundation

/// `pull --json`: one object for the whole run. Field names are stable (docs/usage.md lists them).
package struct RunReport {
    var started: Date
    var feeds: [Feed]
    /// Each feed's report, nil when the run was interrupted before it.
    var reports: [PullReport?]
    var accounts: [Account] = []
    var accountReports: [PullReport?] = []

    package init(
        started: Date, feeds: [Feed], reports: [PullReport?], accounts: [Account], accountReports: [PullReport?]
    ) {
        self.started = started
        self.feeds = feeds
        self.reports = reports
        self.accounts = accounts
        self.accountReports = accountReports
    }

    package var json: String {
        let ended = Date()
        var asked: [String] = []
        var skipped: [String] = []
        for (feed, report) in zip(feeds, reports) {
            guard let report else { continue }
            let start = "{\"number\": \(feed.id), \"url\": \(JSON.string(feed.url)), "
            if let skip = report.skipped {
                skipped.append(start + Self.fields(skip) + "}")
            } else {
                asked.append(start + fields(report, feedID: feed.id, ended: ended) + "}")
            }
        }
        let synced = zip(accounts, accountReports).compactMap { account, report -> String? in
            guard let report else { return nil }
            let requests = report.requests.map { request in
                "{\"operation\": \(JSON.string(request.url)), \"status\": \(JSON.number(request.status))}"
            }
            return """
                {"account": \(JSON.string(account.name)), \
                "outcome": \(JSON.string(report.error?.kind.outcome.rawValue ?? "ok")), \
                "error": \(JSON.string(report.error?.message)), "new_items": \(report.newItems), \
                "requests": [\(requests.joined(separator: ", "))]}
                """
        }
        let silent = Self.silent(reports).map {
            "{\"host\": \(JSON.string($0.host)), \"reason\": \(JSON.string($0.how.description))}"
        }
        return """
            {"started_at": \(JSON.string(iso(started))), "ended_at": \(JSON.string(iso(ended))), \
            "requests": \((reports + accountReports).reduce(0) { $0 + ($1?.requests.count ?? 0) }), \
            "feeds": [\(asked.joined(separator: ", "))], "skipped": [\(skipped.joined(separator: ", "))], \
            "accounts": [\(synced.joined(separator: ", "))], \
            "unanswered_hosts": [\(silent.joined(separator: ", "))]}
            """
    }

    /// The hosts that gave no answer in the run, each once, in the feeds' order, and how.
    package static func silent(_ reports: [PullReport?]) -> [Silence] {
        var seen: Set<String> = []
        return reports.compactMap { $0?.silence }.filter { seen.insert($0.host).inserted }
    }

    private func fields(_ report: PullReport, feedID: Int64, ended: Date) -> String {
        let outcome = report.error?.kind.outcome.rawValue ?? (report.gone ? "gone" : "ok")
        let requests = report.requests.map { request in
            "{\"url\": \(JSON.string(request.url)), \"status\": \(JSON.number(request.status)), "
                + "\"bytes\": \(request.bytes), \"failure\": \(JSON.string(request.failure))}"
        }
        let tally = report.pictures
        return """
            "outcome": \(JSON.string(outcome)), "error": \(JSON.string(report.error?.message)), \
            "requests": [\(requests.joined(separator: ", "))], \
            "bytes": \(report.requests.reduce(0) { $0 + $1.bytes }), \
            "new_items": \(report.newItems), "refreshed_items": \(report.refreshedItems), \
            "pictures": \(tally.count), "picture_bytes": \(tally.bytes), "pictures_failed": \(tally.failed), \
            "moved_to": \(JSON.string(report.movedTo)), \
            "next_due_at": \(JSON.string(report.due.map { iso($0.at) })), \
            "due_reason": \(JSON.string(report.due?.reason)), \
            "due_now": \(report.due.map { $0.at <= ended } ?? false), \
            "unanswered": \(report.unanswered), "offline": \(report.offline), "history": \(JSON.string(report.history))
            """
    }

    private static func fields(_ skip: PullSkip) -> String {
        let (reason, until, detail): (String, Date, String?) =
            switch skip {
            case .gone(let at): ("gone", at, nil)
            case .retryAfter(let until): ("retry_after", until, nil)
            case .notDue(let due, let why): ("not_due", due, why)
            }
        let time = reason == "gone" ? "gone_at" : "until"
        return "\"reason\": \(JSON.string(reason)), \"\(time)\": \(JSON.string(iso(until))), "
            + "\"due_reason\": \(JSON.string(detail))"
    }
}
