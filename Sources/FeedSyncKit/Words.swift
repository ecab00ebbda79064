import FeedSyncFeed
import FeedSyncMarkup
import FeedSyncModel
import Foundation

/// Quantities in words for people, the same in every front end: the command line, the reading
/// page, the terminal reader.
public enum Words {
    /// `812 B`, `64 KB`, `3.5 MB`.
    public static func bytes(_ bytes: Double) -> String {
        if bytes >= 1_048_576 { return String(format: "%.1f MB", bytes / 1_048_576) }
        if bytes >= 1024 { return String(format: "%.0f KB", bytes / 1024) }
        return "\(Int(bytes)) B"
    }

    /// `42:05`, `1:02:03`.
    public static func duration(_ seconds: Int) -> String {
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let (hours, minutes, rest) = (seconds / 3600, seconds / 60 % 60, seconds % 60)
        return hours > 0 ? "\(hours):\(two(minutes)):\(two(rest))" : "\(minutes):\(two(rest))"
    }

    /// What is known of an enclosure besides its URL: `audio/mpeg · 24.0 MB · 42:05` (empty when
    /// nothing is).
    public static func about(_ file: FeedEnclosure) -> String {
        [file.type, file.length.map { bytes(Double($0)) }, file.duration.map(duration)].compactMap { $0 }
            .joined(separator: " · ")
    }
}

extension Words {
    /// The reason phrase of an HTTP status, for the common ones (`404`: `Not Found`).
    public static func reason(_ status: Int) -> String? {
        let phrases = [
            400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found", 405: "Method Not Allowed",
            406: "Not Acceptable", 408: "Request Timeout", 410: "Gone", 429: "Too Many Requests",
            451: "Unavailable For Legal Reasons", 500: "Internal Server Error", 501: "Not Implemented",
            502: "Bad Gateway", 503: "Service Unavailable", 504: "Gateway Timeout",
        ]
        return phrases[status]
    }

    /// A feed's failure for people, the feed named apart: its message without the feed's own URL
    /// leading it, a status with its reason phrase (`answered 404 Not Found`).
    public static func failure(_ message: String, url: String) -> String {
        var text = message
        if text.hasPrefix(url + ": ") {
            text.removeFirst((url + ": ").count)
        } else if text.hasPrefix(url + " ") {
            text = "it" + text.dropFirst(url.count)
        }
        text = text.replacingOccurrences(of: "; check the feed URL", with: "")
        guard let range = text.range(of: "answered "), text[range.upperBound...].count >= 3 else { return text }
        let digits = text[range.upperBound...].prefix(3)
        guard FeedLimits.isDigits(digits), let status = Int(digits), let phrase = reason(status),
            !text[range.upperBound...].dropFirst(3).hasPrefix(" " + phrase)
        else { return text }
        return text.replacingCharacters(
            in: range.upperBound..<text.index(range.upperBound, offsetBy: 3), with: "\(status) \(phrase)")
    }
}
