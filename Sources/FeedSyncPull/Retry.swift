import FeedSyncFeed
import FeedSyncMarkup
import FeedSyncModel
import Foundation

extension RetryPolicy {
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
