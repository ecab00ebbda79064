import FeedSyncModel
import FeedSyncTransport
import Foundation

/// One request's attempts, decided without I/O: whether it is asked at all (what the run knows
/// of the network), what each answer or failure means (hand it on, ask again after a delay, or
/// give up, and how), and what the run learns of the host. `FeedPuller.fetch` carries out its
/// actions (`FetchMachineTests` drive it with synthetic answers).
///
/// The rules: an answer the server would answer otherwise later (408, 429, 5xx) and a transfer
/// that failed after the server answered are asked again up to `maxAttempts` times, after the
/// exponential backoff or the server's `Retry-After`; a `Retry-After` longer than
/// `maxRetryAfter` is not waited for (the pull saves its place, and later pulls skip the feed
/// until then). A request no server answered at all (no such host, refused, unreachable,
/// closed before answering) is asked once more, within 2 s; one whose connection did not come in
/// time is not asked again (the wait itself ran out). Anything else fails at once.
public struct FetchMachine: Sendable {
    public enum Event: Sendable {
        /// The run's network said whether to ask (`RunNetwork.admit`; `.ask` for a pull on its
        /// own), and, for a host that gave no answer earlier in the run, how it gave none.
        case admitted(NetworkVerdict.Decision, silence: Silence?)
        /// The server answered, with any status.
        case answered(HTTPResponse)
        /// The transfer failed (not cancelled).
        case failed(TransportError)
        /// The task was cancelled, in the transfer or during a wait.
        case cancelled
        /// The wait before the next attempt is over.
        case waited
    }

    /// What the run's `RunNetwork` learns of the request's host.
    public enum Note: Sendable, Equatable {
        /// It answered: the network is there.
        case heard
        /// The request is given up without telling anything of the host.
        case release
        /// It gave no answer at all, so.
        case noAnswer(NoAnswer)
        /// It took the connection and then said nothing: the network is there, the host slow.
        case stalled
    }

    public enum Action: Sendable {
        /// Send the request; then `.answered`, `.failed` or `.cancelled`.
        case ask
        /// A request made, for the feed's report.
        case log(PullReport.Request)
        case note(Note)
        /// For the user (`--verbose`, the progress line).
        case report(PullEvent)
        /// Sleep this many seconds; then `.waited` (or `.cancelled`).
        case wait(Double)
        /// The answer to read (`PullMachine.answered`).
        case deliver(HTTPResponse)
        case fail(PullFailure)
    }

    public let url: String
    public let policy: RetryPolicy
    /// The attempt being made, from 1.
    public private(set) var attempt = 1

    public init(url: String, policy: RetryPolicy) {
        self.url = url
        self.policy = policy
    }

    /// What to do after `event`. `now` is for a `Retry-After` given as a date and for the end of
    /// one too long to wait for; `jitter` (0 to 1) is where in the upper half of the backoff's
    /// step the next delay falls, drawn by the shell so that this stays a function of its input.
    public mutating func handle(_ event: Event, now: Date, jitter: Double) -> [Action] {
        switch event {
        case .admitted(.ask, _):
            return [.ask]
        case .admitted(.offline, _):
            return [.fail(.unanswered("\(url): not asked, no server answered this run"))]
        case .admitted(.silentHost, let silence):
            var failure = PullFailure.unanswered(
                "\(url): not asked, its host gave no answer earlier in this run"
                    + (silence.map { " (\($0.how))" } ?? " in time"))
            failure.silence = silence
            return [.fail(failure)]
        case .answered(let response):
            let heard: [Action] = [
                .note(.heard), .log(PullReport.Request(url: url, status: response.status, bytes: response.bodyBytes)),
            ]
            guard response.isTransientFailure else { return heard + [.deliver(response)] }
            return heard
                + retry(
                    "the server answered \(response.status)", status: response.status,
                    retryAfter: RetryPolicy.retryAfter(response.headers["retry-after"], now: now), answered: true,
                    silence: nil, timedOut: false, now: now, jitter: jitter)
        case .failed(let error):
            let logged = Action.log(PullReport.Request(url: url, status: nil, bytes: 0, failure: error.detail))
            if error.kind == .localFile {
                return [logged, .note(.release), .fail(PullFailure(SyncError(.local, error.detail)))]
            }
            guard error.isTransient else {
                return [
                    logged, .note(error.answered ? .heard : .release),
                    .fail(PullFailure(SyncError(.data, "\(url) could not be used: \(error.detail)"))),
                ]
            }
            return [logged] + (error.answered ? [.note(.heard)] : [])
                + retry(
                    error.detail, status: nil, retryAfter: nil, answered: error.answered, silence: error.noAnswer,
                    timedOut: error.kind == .timedOut, now: now, jitter: jitter)
        case .cancelled:
            return [.note(.release), .fail(.interrupted)]
        case .waited:
            attempt += 1
            return [.ask]
        }
    }

    /// After a failure that may pass: ask again after a delay, or give up.
    private func retry(
        _ reason: String, status: Int?, retryAfter: Double?, answered: Bool, silence: NoAnswer?, timedOut: Bool,
        now: Date, jitter: Double
    ) -> [Action] {
        if let retryAfter, retryAfter > policy.maxRetryAfter {
            return [
                .fail(
                    PullFailure(
                        SyncError(
                            .transient,
                            "\(url): \(reason) and asked to wait \(Int(retryAfter)) s; "
                                + "the place is saved and pulls skip this feed until then"),
                        nextRetryAt: now.addingTimeInterval(retryAfter), status: status, retryAfter: retryAfter))
            ]
        }
        // No answer at all (the network gone, or the host): asked again once, soon, unless the
        // wait itself ran out, which costs a host that accepts and never answers once.
        let attempts = answered ? policy.maxAttempts : timedOut ? 1 : min(policy.maxAttempts, 2)
        guard attempt < attempts else {
            var failure = PullFailure(
                SyncError(.transient, "\(url): \(reason), \(attempt) attempt\(attempt == 1 ? "" : "s")"),
                status: status, retryAfter: retryAfter)
            failure.unanswered = !answered
            failure.silence = silence.map { Silence(host: NetworkVerdict.host(of: url), how: $0) }
            failure.savesPlace = true
            // The network is there when a host took the connection and then said nothing.
            let note: [Action] = answered ? [] : [.note(silence.map(Note.noAnswer) ?? .stalled)]
            return note + [.fail(failure)]
        }
        let backoff = policy.backoff(afterAttempt: attempt, jitter: jitter)
        let delay = retryAfter.map { max($0, 0) } ?? (answered ? backoff : min(backoff, 2))
        return [.report(.retrying(url: url, attempt: attempt, delay: delay, reason: reason)), .wait(delay)]
    }
}
