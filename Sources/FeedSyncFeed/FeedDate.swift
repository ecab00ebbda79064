import Foundation

/// Reads the date styles feeds use and writes them as ISO 8601 UTC, second precision.
enum FeedDate {
    static func normalise(_ value: JSONValue) -> String? {
        switch value {
        case .string(let text): parse(text).map(format)
        // Seconds, or milliseconds, since 1970.
        case .number(let number) where number > 0:
            format(Date(timeIntervalSince1970: number > 1e11 ? number / 1000 : number))
        default: nil
        }
    }

    static func parse(_ text: String) -> Date? {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty else { return nil }
        for style in styles {
            if let date = style.date(from: trimmed) { return date }
        }
        return nil
    }

    static func format(_ date: Date) -> String {
        output.string(from: date)
    }

    private static func formatter(_ pattern: String) -> DateFormatter {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = pattern
        return formatter
    }

    private static let output = formatter("yyyy-MM-dd'T'HH:mm:ss'Z'")
    private static let styles: [DateFormatter] = [
        "yyyy-MM-dd'T'HH:mm:ssXXXXX",
        "yyyy-MM-dd'T'HH:mm:ss.SSSXXXXX",
        "yyyy-MM-dd'T'HH:mm:ss",
        "yyyy-MM-dd HH:mm:ss",
        "yyyy-MM-dd",
        "EEE, dd MMM yyyy HH:mm:ss zzz",
        "EEE, dd MMM yyyy HH:mm:ss Z",
        "dd MMM yyyy HH:mm:ss Z",
    ].map(formatter)
}
