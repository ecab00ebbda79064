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

    /// Reads `Retry-After`: delay-seconds or an HTTP-date.
    public static func retryAfter(_ value: String?, now: Date = Date()) -> Double? {
        guard let value = value?.trimmingCharacters(in: .whitespaces), !value.isEmpty else { return nil }
        if let seconds = Double(value), seconds >= 0 { return seconds }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        return formatter.date(from: value).map { max(0, $0.timeIntervalSince(now)) }
    }
}
