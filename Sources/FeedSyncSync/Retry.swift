import FeedSyncFeed
import Foundation

/// When to try a failed request again: exponential backoff with jitter, honouring `Retry-After`.
public struct RetryPolicy: Sendable {
    /// Attempts per request, the first included.
    public var maxAttempts: Int
    /// The first backoff; each further one doubles, up to `maxDelay`.
    public var baseDelay: Double
    public var maxDelay: Double
    /// A `Retry-After` longer than this is not waited for: the pull saves its place, exits 75 and
    /// later pulls skip the feed until then.
    public var maxRetryAfter: Double

    public init(maxAttempts: Int = 5, baseDelay: Double = 1, maxDelay: Double = 30, maxRetryAfter: Double = 120) {
        self.maxAttempts = maxAttempts
        self.baseDelay = baseDelay
        self.maxDelay = maxDelay
        self.maxRetryAfter = maxRetryAfter
    }

    /// Seconds to wait before attempt `attempt + 1` (attempts count from 1), a random point in the
    /// upper half of the exponential step so that many clients don't retry in lockstep.
    public func backoff(afterAttempt attempt: Int) -> Double {
        let step = min(maxDelay, baseDelay * pow(2, Double(attempt - 1)))
        return step / 2 + Double.random(in: 0...(step / 2))
    }

    /// The longest wait a server can ask for: past a day it is asked again after a day.
    public static let longestRetryAfter: Double = 86_400

    /// Reads `Retry-After`: delay-seconds (digits only, as RFC 9110 has them) or an HTTP-date,
    /// within 0 and `longestRetryAfter` seconds. Anything else is no answer.
    public static func retryAfter(_ value: String?, now: Date) -> Double? {
        guard let value = value?.trimmingCharacters(in: .whitespaces), !value.isEmpty, value.utf8.count <= 64 else {
            return nil
        }
        if FeedLimits.isDigits(value) {
            // A number of any length: one past what Double holds exactly is still "very long".
            return min(Double(value) ?? longestRetryAfter, longestRetryAfter)
        }
        return httpDate(value).map { min(max(0, $0.timeIntervalSince(now)), longestRetryAfter) }
    }

    /// An HTTP date (`Retry-After`, `Expires`, `Date`), read as feeds' dates are (`FeedDate`).
    static func httpDate(_ value: String?) -> Date? {
        guard let value = value?.trimmingCharacters(in: .whitespaces), !value.isEmpty, value.utf8.count <= 64 else {
            return nil
        }
        return FeedDate.parse(value).map { Date(timeIntervalSince1970: Double($0)) }
    }
}
