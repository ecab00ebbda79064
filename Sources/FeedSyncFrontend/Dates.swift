import FeedSyncKit
import Foundation

/// "just now", "2 min ago", "3 h ago", "4 days ago".
package func relative(_ date: Date, now: Date = Date()) -> String {
    let seconds = Int(now.timeIntervalSince(date))
    switch seconds {
    case ..<60: return "just now"
    case ..<3600: return "\(seconds / 60) min ago"
    case ..<86400: return "\(seconds / 3600) h ago"
    default: return "\(seconds / 86400) days ago"
    }
}

/// ISO 8601 UTC, second precision.
package func iso(_ date: Date) -> String {
    // The store's own writer: an ISO8601DateFormatter made per call cost 80 µs, which `feeds --json`
    // paid per feed.
    StoredDate.iso(date)
}

/// A stored date (ISO 8601 UTC) in local time, `2026-11-24` or `2026-11-24 14:05`.
package enum LocalTime {
    /// `14:05` today, else `2026-11-25 14:05`, local time.
    package static func short(_ date: Date, now: Date = Date()) -> String {
        let local = string(seconds: time_t(date.timeIntervalSince1970), time: true)
        let today = string(seconds: time_t(now.timeIntervalSince1970), time: false)
        return local.hasPrefix(today + " ") ? String(local.suffix(5)) : local
    }

    /// `14:05` for a time today, else the date, `2026-11-25`, local time.
    package static func dateOrTime(seconds: time_t, now: Date = Date()) -> String {
        let local = string(seconds: seconds, time: true)
        let today = string(seconds: time_t(now.timeIntervalSince1970), time: false)
        return local.hasPrefix(today + " ") ? String(local.suffix(5)) : String(local.prefix(10))
    }

    package static func string(_ published: String, time: Bool) -> String? {
        StoredDate.seconds(published).map { string(seconds: time_t($0), time: time) }
    }

    package static func string(seconds: time_t, time: Bool) -> String {
        var seconds = seconds
        var parts = tm()
        localtime_r(&seconds, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let date = "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))"
        return time ? date + " \(two(parts.tm_hour)):\(two(parts.tm_min))" : date
    }
}

/// Dates given on the command line.
package enum DateArgument {
    /// `YYYY-MM-DD` (local midnight), ISO 8601 with a time, `today` or `yesterday` (local
    /// midnight), or a duration back from now: `30m`, `12h`, `7d`, `2w`.
    package static func parse(_ text: String, now: Date = Date()) -> Date? {
        switch text.lowercased() {
        case "today": return Calendar.current.startOfDay(for: now)
        case "yesterday":
            return Calendar.current.date(byAdding: .day, value: -1, to: Calendar.current.startOfDay(for: now))
        default: break
        }
        let units: [Character: Double] = ["m": 60, "h": 3600, "d": 86400, "w": 604_800]
        if let unit = text.last.flatMap({ units[$0] }), let count = Int(text.dropLast()), (0...100_000).contains(count)
        {
            return now.addingTimeInterval(-Double(count) * unit)
        }
        if text.count == 10 {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.dateFormat = "yyyy-MM-dd"
            return formatter.date(from: text)
        }
        return ISO8601DateFormatter().date(from: text)
    }
}
