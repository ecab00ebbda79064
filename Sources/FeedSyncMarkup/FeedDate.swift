import FeedSyncModel
import Foundation

/// Reads the date styles feeds use and writes them as ISO 8601 UTC, second precision.
///
/// Two hand-written readers, because feeds stretch both standards: ISO 8601 / RFC 3339 (Atom,
/// JSON Feed, WordPress; with or without a zone, `T` or a space) and RFC 822 as RSS writes it
/// (with or without weekday, comma or seconds; one-digit days, two-digit years, full month names,
/// `GMT`, `EST`, `+0200` or `+02:00`, and the `Mon May 05 2024 10:00:00 GMT+0200` JavaScript style).
/// A date without a zone is read as UTC.
public enum FeedDate {
    package static func normalise(_ value: JSONValue) -> String? {
        switch value {
        case .string(let text): normalise(text)
        // Seconds, or milliseconds, since 1970.
        case .number(let number) where number > 0 && number < 1e14:
            format(Int64(number > 1e11 ? number / 1000 : number))
        default: nil
        }
    }

    package static func normalise(_ text: String) -> String? {
        parse(text).map(format)
    }

    /// Seconds since 1970, or `nil` when `text` is no date this reader knows.
    public static func parse(_ text: String) -> Int64? {
        parse(Array(text.utf8))
    }

    /// A date's text as UTF-8, as an XML reader gathers it.
    package static func normalise(_ text: [UInt8]) -> String? {
        parse(text).map(format)
    }

    package static func parse(_ text: [UInt8]) -> Int64? {
        let start = text.firstIndex { $0 != 0x20 && $0 != 0x09 && $0 != 0x0A && $0 != 0x0D } ?? text.endIndex
        let bytes = start == 0 ? text : Array(text[start...])
        guard let first = bytes.first else { return nil }
        if bytes.count >= 8, isDigit(first), bytes[4] == UInt8(ascii: "-") {
            return iso(bytes)
        }
        return rfc822(bytes)
    }

    // MARK: ISO 8601

    private static func iso(_ b: [UInt8]) -> Int64? {
        var r = Reader(bytes: b)
        // Month, day and hour may go without their zero (`2005-5-28 6:05:36`), as some CMSes write them.
        guard let year = r.number(4), r.skip("-"), let month = r.number(upTo: 2), r.skip("-"),
            let day = r.number(upTo: 2)
        else { return nil }
        var hour = 0
        var minute = 0
        var second = 0
        var offset = 0
        if r.skip("T") || r.skip("t") || r.skip(" ") {
            guard let h = r.number(upTo: 2), r.skip(":"), let m = r.number(2) else { return nil }
            (hour, minute) = (h, m)
            if r.skip(":") {
                guard let s = r.number(2) else { return nil }
                second = s
                if r.skip(".") || r.skip(",") { while r.index < b.count, isDigit(b[r.index]) { r.index += 1 } }
            }
            while r.skip(" ") {}
            if r.index < b.count, !r.skip("Z"), !r.skip("z") {
                guard let zone = zoneOffset(b[r.index...]) else { return nil }
                offset = zone
                r.index = b.count
            }
        }
        guard b[r.index...].allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) else { return nil }
        return seconds(year: year, month: month, day: day, hour: hour, minute: minute, second: second, offset: offset)
    }

    /// Reads an ISO date's fields left to right. (A struct, not functions nested in `iso`: those
    /// captured the index in a box checked for exclusive access at every use, a third of a
    /// paged-JSON item's date.)
    private struct Reader {
        package let bytes: [UInt8]
        package var index = 0

        /// The value of the next `width` bytes, all digits.
        package mutating func number(_ width: Int) -> Int? {
            guard index + width <= bytes.count else { return nil }
            var value = 0
            for byte in bytes[index..<(index + width)] {
                guard isDigit(byte) else { return nil }
                value = value * 10 + Int(byte - 0x30)
            }
            index += width
            return value
        }

        /// The value of the next one to `width` digits (as many as there are).
        package mutating func number(upTo width: Int) -> Int? {
            var count = 0
            while count < width, index + count < bytes.count, isDigit(bytes[index + count]) { count += 1 }
            return count > 0 ? number(count) : nil
        }

        /// Steps over the next byte when it is `byte`.
        package mutating func skip(_ byte: Unicode.Scalar) -> Bool {
            guard index < bytes.count, bytes[index] == UInt8(ascii: byte) else { return false }
            index += 1
            return true
        }
    }

    // MARK: RFC 822 and its relatives

    // Every RSS item's date comes through here: tokens are byte slices, words compared in ASCII
    // lower case (a word with other letters is no month, weekday or zone).
    private typealias Token = ArraySlice<UInt8>

    private static func rfc822(_ bytes: [UInt8]) -> Int64? {
        if let date = canonicalRFC822(bytes) { return date }
        var day: Int?
        var month: Int?
        var year: Int?
        var time: (Int, Int, Int)?
        var offset = 0
        var meridiem: UInt8?  // `a` or `p`: a 12-hour clock
        let tokens = bytes.split { $0 == 0x20 || $0 == UInt8(ascii: ",") || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }
        for token in tokens {
            if token.first == UInt8(ascii: "(") { continue }  // "(CEST)", a comment
            if let half = Self.meridiem(token) {
                meridiem = half
            } else if time == nil, token.contains(UInt8(ascii: ":")),
                case let digits = token.prefix(while: {
                    isDigit($0) || $0 == UInt8(ascii: ":") || $0 == UInt8(ascii: ".")
                }),
                let parsed = clock(digits),
                digits.count == token.count || Self.meridiem(token[digits.endIndex...]) != nil
            {
                time = parsed
                if digits.count < token.count { meridiem = Self.meridiem(token[digits.endIndex...]) }  // 8:56am
            } else if day == nil, month == nil, year == nil, let (y, m, d) = yearMonthDay(token) {
                (year, month, day) = (y, m, d)
            } else if let value = number(token) {
                if token.count == 4, year == nil {
                    year = value
                } else if day == nil, (1...31).contains(value) {
                    day = value
                } else if year == nil, token.count <= 2 {
                    year = value < 50 ? 2000 + value : 1900 + value
                } else {
                    return nil
                }
            } else if month == nil, let found = monthNumber(token) {
                month = found
            } else if weekday(token) {
                continue
            } else if let zone = zoneOffset(token) {
                offset = zone
            } else {
                return nil
            }
        }
        guard let day, let month, let year else { return nil }
        var (hour, minute, second) = time ?? (0, 0, 0)
        if let meridiem {
            guard (1...12).contains(hour) else { return nil }
            hour = hour % 12 + (meridiem == UInt8(ascii: "p") ? 12 : 0)
        }
        return seconds(year: year, month: month, day: day, hour: hour, minute: minute, second: second, offset: offset)
    }

    /// `Tue, 07 May 2024 09:30:00 GMT` (or `+0200`), as nearly every RSS feed writes it, read by
    /// position; anything else is left to the general reader.
    private static func canonicalRFC822(_ b: [UInt8]) -> Int64? {
        guard b.count >= 27, b[3] == UInt8(ascii: ","), b[4] == 0x20, b[7] == 0x20, b[11] == 0x20, b[16] == 0x20,
            b[19] == UInt8(ascii: ":"), b[22] == UInt8(ascii: ":"), b[25] == 0x20,
            weekday(b[0..<3]), let month = monthNumber(b[8..<11]),
            let day = number(b[5..<7]), let year = number(b[12..<16]), let hour = number(b[17..<19]),
            let minute = number(b[20..<22]), let second = number(b[23..<25]), let offset = zoneOffset(b[26...])
        else { return nil }
        return seconds(year: year, month: month, day: day, hour: hour, minute: minute, second: second, offset: offset)
    }

    /// `am`, `pm`, `a.m.` or `p.m.` (any case): `a` or `p`.
    private static func meridiem(_ token: Token) -> UInt8? {
        let letters = token.filter { $0 != UInt8(ascii: ".") }.map { $0 | 0x20 }
        guard letters.count == 2, letters[1] == UInt8(ascii: "m"),
            letters[0] == UInt8(ascii: "a") || letters[0] == UInt8(ascii: "p")
        else { return nil }
        return letters[0]
    }

    /// `2020/1/10` (year first, so not ambiguous); `1/10/2020` is, and is no date.
    private static func yearMonthDay(_ token: Token) -> (Int, Int, Int)? {
        let parts = token.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, let year = number(parts[0]),
            (1...2).contains(parts[1].count), let month = number(parts[1]),
            (1...2).contains(parts[2].count), let day = number(parts[2])
        else { return nil }
        return (year, month, day)
    }

    /// The value of a token of 1 to 9 ASCII digits.
    private static func number(_ token: Token) -> Int? {
        guard (1...9).contains(token.count) else { return nil }
        var value = 0
        for byte in token {
            guard isDigit(byte) else { return nil }
            value = value * 10 + Int(byte - 0x30)
        }
        return value
    }

    /// `10:00`, `10:00:00` or `10:00:00.123`.
    private static func clock(_ token: Token) -> (Int, Int, Int)? {
        let parts = token.split(separator: UInt8(ascii: ":"), omittingEmptySubsequences: false)
        guard (2...3).contains(parts.count) else { return nil }
        let numbers = parts.map { number($0.prefix { $0 != UInt8(ascii: ".") }) }
        guard let hour = numbers[0], let minute = numbers[1] else { return nil }
        let second = parts.count == 3 ? numbers[2] : 0
        guard let second else { return nil }
        return (hour, minute, second)
    }

    /// `token` in ASCII lower case, or nil when it is not all ASCII letters.
    private static func word(_ token: Token) -> [UInt8]? {
        guard token.allSatisfy({ ($0 | 0x20) >= 0x61 && ($0 | 0x20) <= 0x7A }) else { return nil }
        return token.map { $0 | 0x20 }
    }

    private static let months = [
        "january", "february", "march", "april", "may", "june", "july", "august",
        "september", "october", "november", "december",
    ].map { Array($0.utf8) }

    /// "May", "Sept", "September": a full or shortened name of at least three letters, never another word.
    private static func monthNumber(_ token: Token) -> Int? {
        guard token.count >= 3, let lower = word(token) else { return nil }
        return months.firstIndex { $0.starts(with: lower) }.map { $0 + 1 }
    }

    private static let weekdays = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
        .map { Array($0.utf8) }

    private static func weekday(_ token: Token) -> Bool {
        guard token.count >= 3, let lower = word(token) else { return false }
        return weekdays.contains { $0.starts(with: lower) }
    }

    /// Seconds east of UTC for `Z`, `GMT`, `UT`, `UTC`, the US zones, military letters, `+0200`,
    /// `+02:00`, `+02`, and `GMT+0200`.
    private static func zoneOffset(_ raw: Token) -> Int? {
        let blank: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }
        var token = raw.drop(while: blank)
        while let last = token.last, blank(last) { token = token.dropLast() }
        let upper = token.map { ($0 | 0x20) >= 0x61 && ($0 | 0x20) <= 0x7A ? $0 & ~0x20 : $0 }
        var rest = upper[...]
        if rest.starts(with: "GMT".utf8) || rest.starts(with: "UTC".utf8) {
            rest = rest.dropFirst(3)
            if rest.isEmpty { return 0 }
        }
        if let named = zones[String(decoding: rest, as: UTF8.self)] { return named }
        if rest.count == 1, let letter = rest.first, letter >= 0x41, letter <= 0x5A { return 0 }
        guard let sign = rest.first, sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") else { return nil }
        let digits = rest.dropFirst().filter { $0 != UInt8(ascii: ":") }
        guard digits.count == 2 || digits.count == 4, let value = number(digits[...]) else { return nil }
        let (hours, minutes) = digits.count == 2 ? (value, 0) : (value / 100, value % 100)
        guard hours <= 14, minutes < 60 else { return nil }
        return (sign == UInt8(ascii: "-") ? -1 : 1) * (hours * 3600 + minutes * 60)
    }

    /// Zone names feeds write (seconds east of UTC): North America's (RFC 822's four and the
    /// others) and Europe's. BST and IST are read as Europe's (British Summer Time, Irish Standard
    /// Time), the zones of the feeds that write them in RFC 822 dates; a name not listed is no date.
    private static let zones: [String: Int] = [
        "WET": 0, "WEST": 3600, "BST": 3600, "IST": 3600, "CET": 3600, "CEST": 2 * 3600, "MET": 3600,
        "MEST": 2 * 3600, "EET": 2 * 3600, "EEST": 3 * 3600, "MSK": 3 * 3600,
        "UT": 0, "UTC": 0, "GMT": 0, "Z": 0,
        "EST": -5 * 3600, "EDT": -4 * 3600, "CST": -6 * 3600, "CDT": -5 * 3600, "MST": -7 * 3600, "MDT": -6 * 3600,
        "PST": -8 * 3600, "PDT": -7 * 3600, "AST": -4 * 3600, "ADT": -3 * 3600, "NST": -(3 * 3600 + 1800),
        "NDT": -(2 * 3600 + 1800), "AKST": -9 * 3600, "AKDT": -8 * 3600, "HST": -10 * 3600, "HAST": -10 * 3600,
        "HADT": -9 * 3600,
    ]

    // MARK: Arithmetic

    private static func seconds(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int, offset: Int)
        -> Int64?
    {
        guard (1...12).contains(month), (1...daysIn(month, year)).contains(day), (0...23).contains(hour),
            (0...59).contains(minute), (0...60).contains(second), (1000...9999).contains(year)
        else { return nil }
        let days = daysFromCivil(year, month, day)
        let seconds = days * 86_400 + Int64(hour * 3600 + minute * 60 + min(second, 59) - offset)
        // The zone may carry a date across the range's ends (9999-12-31T23:59-23:59): still no year 10000.
        return storable.contains(seconds) ? seconds : nil
    }

    /// The instants from 1000-01-01 to 9999-12-31 UTC, whose ISO text is 20 characters.
    private static let storable = daysFromCivil(1000, 1, 1) * 86_400...(daysFromCivil(10000, 1, 1) * 86_400 - 1)

    private static func daysIn(_ month: Int, _ year: Int) -> Int {
        switch month {
        case 2: year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
    private static func daysFromCivil(_ year: Int, _ month: Int, _ day: Int) -> Int64 {
        let y = Int64(month <= 2 ? year - 1 : year)
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let m = Int64(month)
        let doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + Int64(day) - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    /// `seconds` since 1970 as stored: ISO 8601 UTC to the second, `2024-05-01T10:00:00Z`.
    public static func format(_ seconds: Int64) -> String {
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let rest = Int(seconds - days * 86_400)
        // Inverse of daysFromCivil.
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        let year = yoe + era * 400 + (month <= 2 ? 1 : 0)
        func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
        guard (0...9999).contains(year) else {
            return
                "\(year)-\(two(month))-\(two(day))T"
                + "\(two(Int64(rest / 3600))):\(two(Int64(rest / 60 % 60))):\(two(Int64(rest % 60)))Z"
        }
        // Every stored item goes through here: bytes, not six interpolations.
        return String(unsafeUninitializedCapacity: 20) { text in
            func put(_ value: Int, at index: Int, digits: Int) {
                var value = value
                for offset in (0..<digits).reversed() {
                    text[index + offset] = UInt8(0x30 + value % 10)
                    value /= 10
                }
            }
            put(Int(year), at: 0, digits: 4)
            put(Int(month), at: 5, digits: 2)
            put(Int(day), at: 8, digits: 2)
            put(rest / 3600, at: 11, digits: 2)
            put(rest / 60 % 60, at: 14, digits: 2)
            put(rest % 60, at: 17, digits: 2)
            (text[4], text[7], text[10]) = (UInt8(ascii: "-"), UInt8(ascii: "-"), UInt8(ascii: "T"))
            (text[13], text[16], text[19]) = (UInt8(ascii: ":"), UInt8(ascii: ":"), UInt8(ascii: "Z"))
            return 20
        }
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }
}
