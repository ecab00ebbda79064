import FeedSyncFeed
import FeedSyncMarkup
import FeedSyncModel
import FeedSyncStore
import Foundation

/// When a feed is asked for again, and why: the largest wait its server (Cache-Control, Expires,
/// Retry-After) or its document (RSS `ttl`, `sy:updatePeriod`) asks for, at least `minInterval`
/// and at most a day, moved out of the hours and days the document skips; after failures, a wait
/// doubling from 15 minutes to a day; after a pull no server answered at all (the network gone),
/// no wait for the first three in a row. A due time is early by `tolerance(of:)`, so a timer
/// whose runs start a little earlier or later in their slot asks every time it should; never
/// early for a `Retry-After`. Pure: `ScheduleTests` checks each rule.
public struct Schedule: Sendable {
    /// The shortest wait between two asks of one feed (`pull --min-interval`).
    public var minInterval: Double
    public static let defaultMinInterval: Double = 900
    /// The longest: a server asking for more is asked again after a day.
    public static let maxInterval: Double = 86_400
    /// The first wait after a failure; each failure in a row doubles it, up to `maxInterval`.
    public static let firstBackoff: Double = 900
    /// Pulls in a row no server answered that leave the feed due at once: the network went away
    /// and comes back. From the next one on, the host may be dead: it backs off like a failure.
    public static let unansweredWithoutWait = 3
    /// How early a due time may be: a quarter of the wait, at most this. A systemd timer runs
    /// within `RandomizedDelaySec` (2 min) and `AccuracySec` (1 min) of its slot, cron within a
    /// second; a feed asked at one run is due by the same run of the next slot.
    public static let maxTolerance: Double = 300

    public typealias Due = DueTime
    public typealias Asking = PullAsking
    public typealias Skip = PullSkip

    public init(minInterval: Double = Schedule.defaultMinInterval) {
        self.minInterval = minInterval
    }

    /// After the server answered (200, or 304 Not Modified), with the head response's `headers`
    /// and what the feed's document says (`document`).
    public func afterSuccess(now: Date, headers: [String: String], document: FeedSchedule) -> Due {
        // `exact`: a server's Retry-After, which no tolerance shortens.
        var waits: [(seconds: Double, reason: String, exact: Bool)] = [
            (minInterval, "minimum interval \(Self.words(minInterval))", false)
        ]
        if let maxAge = Self.maxAge(headers["cache-control"]) {
            waits.append((maxAge, "max-age \(Self.words(maxAge))", false))
        }
        if let expires = Self.expires(headers, now: now) {
            waits.append((expires, "Expires in \(Self.words(expires))", false))
        }
        if let ttl = document.ttlMinutes {
            waits.append((Double(ttl) * 60, "ttl \(Self.words(Double(ttl) * 60))", false))
        }
        if let update = document.updateSeconds {
            waits.append((Double(update), "sy:updatePeriod \(Self.words(Double(update)))", false))
        }
        if let retryAfter = RetryPolicy.retryAfter(headers["retry-after"], now: now) {
            waits.append((retryAfter, "Retry-After \(Self.words(retryAfter))", true))
        }
        // The first of the largest: the minimum interval when nothing asks for more.
        var longest = waits[0]
        for wait in waits.dropFirst() where wait.seconds > longest.seconds { longest = wait }
        if longest.seconds > Self.maxInterval {
            longest = (Self.maxInterval, longest.reason + ", at most a day", false)
        }
        return Self.outOfSkipped(
            Self.due(now, after: longest.seconds, longest.reason, exact: longest.exact), document)
    }

    /// Due `wait` after `now`, early by its tolerance unless `exact` (a server's `Retry-After`).
    static func due(_ now: Date, after wait: Double, _ reason: String, exact: Bool = false) -> Due {
        Due(at: now.addingTimeInterval(exact ? wait : wait - tolerance(of: wait)), reason: reason)
    }

    /// How much earlier than `wait` after the last ask a feed is due: a quarter of the wait, at
    /// most `maxTolerance` (15 min: 3 min 45 s early; an hour or more: 5 min early).
    public static func tolerance(of wait: Double) -> Double {
        min(max(wait, 0) / 4, maxTolerance)
    }

    /// After a failure, the `failures`-th in a row; `retryAfter`: seconds the server asked for.
    public func afterFailure(now: Date, failures: Int, retryAfter: Double?) -> Due {
        let backoff = backoff(failures: failures)
        let counted = failures == 1 ? "1 failure" : "\(failures) failures in a row"
        if let retryAfter, retryAfter > backoff {
            return Self.due(now, after: retryAfter, "Retry-After \(Self.words(retryAfter))", exact: true)
        }
        return Self.due(now, after: backoff, "\(counted), waits \(Self.words(backoff))")
    }

    /// After the `unanswered`-th pull in a row that no server answered: due at once for the first
    /// `unansweredWithoutWait` (the next pull continues where the network cut this one off), then
    /// backing off from 15 minutes as failures do.
    public func afterNoAnswer(now: Date, unanswered: Int) -> Due {
        let times = unanswered == 1 ? "once" : "\(unanswered) times in a row"
        guard unanswered > Self.unansweredWithoutWait else {
            return Due(at: now, reason: "no answer \(times); asked again at the next pull")
        }
        let backoff = backoff(failures: unanswered - Self.unansweredWithoutWait)
        return Self.due(now, after: backoff, "no answer \(times), waits \(Self.words(backoff))")
    }

    /// The wait after the `failures`-th failure in a row: 15 minutes doubling up to a day, at least
    /// the minimum interval.
    private func backoff(failures: Int) -> Double {
        let doubled = Self.firstBackoff * pow(2, Double(min(max(failures, 1), 20) - 1))
        return max(minInterval, min(Self.maxInterval, doubled))
    }

    /// After a 429 Too Many Requests, which is the server's load, not the feed's failure: the
    /// `Retry-After` it gave, at least the minimum interval.
    public func afterTooManyRequests(now: Date, retryAfter: Double?) -> Due {
        let wait = min(Self.maxInterval, max(minInterval, retryAfter ?? 0))
        return Self.due(
            now, after: wait, "429 Too Many Requests, waits \(Self.words(wait))", exact: (retryAfter ?? 0) >= wait)
    }

    /// Whether to leave `feed` alone in a pull that asks so: gone feeds always; a feed whose
    /// server asked to wait, unless forced; a feed not due yet, in a plain pull.
    public static func skip(_ feed: Feed, asking: Asking, now: Date) -> Skip? {
        if let gone = feed.goneAt { return .gone(gone) }
        if asking != .forced, let until = feed.nextRetryAt, until > now { return .retryAfter(until) }
        if asking == .due, let due = feed.dueAt, due > now { return .notDue(due, feed.dueReason ?? "") }
        return nil
    }

    /// From when a plain pull asks `feed`: the later of its due time and its server's
    /// `Retry-After`; nil when it is never asked (gone). A time not after `now` means the next pull.
    public static func nextAsk(_ feed: Feed) -> Date? {
        guard feed.goneAt == nil else { return nil }
        return [feed.dueAt, feed.nextRetryAt].compactMap { $0 }.max() ?? .distantPast
    }

    // MARK: What servers and documents say

    /// The largest `max-age` or `s-maxage` of a Cache-Control header, in seconds.
    static func maxAge(_ header: String?) -> Double? {
        guard let header, header.utf8.count <= 1024 else { return nil }
        var longest: Double?
        for directive in header.split(separator: ",") {
            let parts = directive.split(separator: "=", maxSplits: 1).map {
                $0.trimmingCharacters(in: .whitespaces).lowercased()
            }
            guard parts.count == 2, parts[0] == "max-age" || parts[0] == "s-maxage" else { continue }
            let digits = parts[1].trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            guard FeedLimits.isDigits(digits) else { continue }
            let seconds = digits.utf8.count > 9 ? 1e9 : Double(digits)!  // the wait is cut to a day later
            longest = max(longest ?? 0, seconds)
        }
        return longest
    }

    /// Seconds until `Expires`, counted from the response's `Date` when it has one (so a client
    /// clock that is off does not matter), else from now; nil when it is past or not a date.
    static func expires(_ headers: [String: String], now: Date) -> Double? {
        guard let expires = RetryPolicy.httpDate(headers["expires"]) else { return nil }
        let from = RetryPolicy.httpDate(headers["date"]) ?? now
        let seconds = expires.timeIntervalSince(from)
        return seconds > 0 ? seconds : nil
    }

    /// Moves `due` to the first hour (UTC) that the document's skipHours and skipDays allow. A
    /// document that skips every hour (or every day) is not obeyed: the feed would never be asked.
    static func outOfSkipped(_ due: Due, _ document: FeedSchedule) -> Due {
        let everyHour = (1 << 24) - 1
        let everyDay = (1 << 7) - 1
        let hours = document.skipHours == everyHour ? 0 : document.skipHours
        let days = document.skipDays == everyDay ? 0 : document.skipDays
        guard hours != 0 || days != 0 else { return due }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        var at = due.at
        var moved: Set<String> = []
        for _ in 0..<(8 * 24) {
            let parts = calendar.dateComponents([.hour, .weekday], from: at)
            let skipsDay = days & (1 << (parts.weekday! - 1)) != 0
            let skipsHour = hours & (1 << parts.hour!) != 0
            guard skipsDay || skipsHour else { break }
            moved.insert(skipsDay ? "skipDays" : "skipHours")
            // The start of the next hour.
            at = calendar.dateInterval(of: .hour, for: at)!.end
        }
        guard !moved.isEmpty else { return due }
        return Due(at: at, reason: due.reason + ", then " + moved.sorted().joined(separator: " and "))
    }

    /// A wait in words: "45 s", "15 min", "2 h", "1 h 30 min".
    public static func words(_ seconds: Double) -> String {
        if seconds < 60 { return "\(Int(seconds.rounded())) s" }
        let minutes = Int((seconds / 60).rounded())
        if minutes < 120 { return "\(minutes) min" }
        return minutes % 60 == 0 ? "\(minutes / 60) h" : "\(minutes / 60) h \(minutes % 60) min"
    }
}
