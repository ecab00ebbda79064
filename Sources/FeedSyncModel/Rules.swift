import Foundation

// Rules and saved views: a condition over an item's fields, as the user writes it (`WHEN`), parsed
// into a tree. The store runs the tree, in Swift on items arriving and as SQL over items stored
// (Store+Rules.swift); both use the same text functions and the same RE2 matcher.

/// What a rule does to the items its condition matches.
public enum RuleAction: String, Sendable, CaseIterable {
    /// Kept in the store, shown in no list, page or count unless asked (`list --hidden`).
    case hide
    /// Marked read on arrival (queued for an account's server as a mark made by hand is).
    case read
    /// Starred on arrival (queued likewise).
    case star
}

/// A rule as stored: its number, what it does, its condition as written, and where it applies
/// (one feed, a folder and the folders inside it, or every feed).
public struct Rule: Sendable, Equatable {
    public var number: Int64
    public var action: RuleAction
    public var condition: String
    public var feedURL: String?
    public var folder: String?
    public init(number: Int64, action: RuleAction, condition: String, feedURL: String? = nil, folder: String? = nil) {
        self.number = number
        self.action = action
        self.condition = condition
        self.feedURL = feedURL
        self.folder = folder
    }
}

/// A saved view (newsboat's query feed): a named condition, listed beside the feeds.
public struct SavedView: Sendable, Equatable {
    public var name: String
    public var condition: String
    /// How many of its items are unread, when asked.
    public var unread: Int?
    public init(name: String, condition: String, unread: Int? = nil) {
        self.name = name
        self.condition = condition
        self.unread = unread
    }
}

/// The item fields a condition reads as text.
public enum TextField: String, Sendable, CaseIterable {
    case title, content, author, link, feed, categories
}

/// A parsed condition.
public indirect enum Condition: Sendable, Equatable {
    /// The field's text (any one category; the feed's name or its URL) holds a match of the
    /// pattern, case-insensitive unless the pattern says `(?-i)`.
    case matches(TextField, String)
    /// The field's text is the value, ignoring case (any one category; the feed's name or URL).
    case equals(TextField, String)
    /// The item's time in the timeline is after (`newer`) or before the time, Unix seconds.
    case newer(Int64)
    case older(Int64)
    /// An age, in seconds: younger than (`age < 30d`) or older than, measured from the clock's now.
    case youngerThan(Int64)
    case olderThan(Int64)
    case unread
    case starred
    case not(Condition)
    case and(Condition, Condition)
    case or(Condition, Condition)

    /// The condition with its ages made times, measured back from `now` (Unix seconds): what SQL runs.
    public func resolved(now: Int64) -> Condition {
        switch self {
        case .youngerThan(let age): .newer(now - age)
        case .olderThan(let age): .older(now - age)
        case .not(let inner): .not(inner.resolved(now: now))
        case .and(let a, let b): .and(a.resolved(now: now), b.resolved(now: now))
        case .or(let a, let b): .or(a.resolved(now: now), b.resolved(now: now))
        default: self
        }
    }
}

/// Why a condition could not be read: where (the character, from 1) and what was expected.
public struct ConditionError: Error, Sendable, Equatable, CustomStringConvertible {
    public var position: Int
    public var reason: String
    public init(position: Int, _ reason: String) {
        self.position = position
        self.reason = reason
    }
    public var description: String { "the condition is wrong at character \(position): \(reason)" }
}

extension Condition {
    /// The longest condition and the longest pattern taken: a condition is typed by a person.
    public static let maxLength = 4000
    public static let maxPatternLength = 1000

    /// Reads `text` (the grammar is in docs/usage.md, Rules); `checkPattern` returns why a
    /// pattern cannot be used, or nil.
    public static func parse(_ text: String, checkPattern: @escaping (String) -> String? = { _ in nil })
        throws(ConditionError)
        -> Condition
    {
        // Counted as SQLite counts what it stores (code points), which checks the same bound.
        guard text.unicodeScalars.count <= maxLength else {
            throw ConditionError(position: maxLength + 1, "it is longer than \(maxLength) characters")
        }
        var parser = ConditionParser(text, checkPattern: checkPattern)
        return try parser.whole()
    }
}

/// What a condition is asked of: one item's fields, made by the caller.
public struct ConditionSubject {
    public var title: String
    /// Its text; made only when a condition reads it (the caller knows: `Condition.readsContent`).
    public var content: String
    public var author: String?
    public var link: String?
    public var feedName: String
    public var feedURL: String
    public var categories: [String]
    /// Its time in the timeline, Unix seconds.
    public var time: Int64
    public var unread: Bool
    public var starred: Bool
    public init(
        title: String, content: String, author: String?, link: String?, feedName: String,
        feedURL: String, categories: [String], time: Int64, unread: Bool, starred: Bool
    ) {
        self.title = title
        self.content = content
        self.author = author
        self.link = link
        self.feedName = feedName
        self.feedURL = feedURL
        self.categories = categories
        self.time = time
        self.unread = unread
        self.starred = starred
    }
}

extension Condition {
    /// Whether the item matches, at `now` (Unix seconds); `matches(field, pattern, text)` is the
    /// pattern matcher (the store's RE2), told which field the text is of.
    public func holds(
        for item: ConditionSubject, now: Int64, matches: (TextField, String, String) -> Bool
    ) -> Bool {
        // Each of the field's texts in turn, no array made: this runs for every rule and item.
        func any(_ field: TextField, _ test: (String) -> Bool) -> Bool {
            switch field {
            case .title: test(item.title)
            case .content: test(item.content)
            case .author: item.author.map(test) ?? false
            case .link: item.link.map(test) ?? false
            case .feed: test(item.feedName) || test(item.feedURL)
            case .categories: item.categories.contains(where: test)
            }
        }
        switch self {
        case .matches(let field, let pattern): return any(field) { matches(field, pattern, $0) }
        case .equals(let field, let value): return any(field) { Self.same($0, value) }
        case .newer(let time): return item.time > time
        case .older(let time): return item.time < time
        case .youngerThan(let age): return item.time > now - age
        case .olderThan(let age): return item.time < now - age
        case .unread: return item.unread
        case .starred: return item.starred
        case .not(let inner): return !inner.holds(for: item, now: now, matches: matches)
        case .and(let a, let b):
            return a.holds(for: item, now: now, matches: matches) && b.holds(for: item, now: now, matches: matches)
        case .or(let a, let b):
            return a.holds(for: item, now: now, matches: matches) || b.holds(for: item, now: now, matches: matches)
        }
    }

    /// Whether it reads nothing but the item's own words (its title, content, author, link and
    /// categories): what it matches then changes only as those do, so a view of it keeps its
    /// items as they arrive. An age, a date, a mark or a feed's name (which the user can change)
    /// is read where the view is asked.
    public var readsOnlyTheItemsWords: Bool {
        switch self {
        case .matches(let field, _), .equals(let field, _): field != .feed
        case .not(let inner): inner.readsOnlyTheItemsWords
        case .and(let a, let b), .or(let a, let b): a.readsOnlyTheItemsWords && b.readsOnlyTheItemsWords
        default: false
        }
    }

    /// Whether it reads the item's content, the text that costs most to make.
    public var readsContent: Bool {
        switch self {
        case .matches(.content, _), .equals(.content, _): true
        case .not(let inner): inner.readsContent
        case .and(let a, let b), .or(let a, let b): a.readsContent || b.readsContent
        default: false
        }
    }

    /// `=`'s comparison, in Swift and in SQL alike (Store+Rules.swift registers it).
    public static func same(_ text: String, _ value: String) -> Bool {
        text.count == value.count && text.lowercased() == value.lowercased()
    }
}

/// A recursive-descent reader of the condition grammar:
/// `or := and ("or" and)*`, `and := unary ("and" unary)*`, `unary := "not" unary | "(" or ")" | test`,
/// `test := textField ("~" | "=") value | ("age" | "date") ("<" | ">") value | "unread" | "read" | "starred"`.
struct ConditionParser {
    private let characters: [Character]
    private var at = 0
    private let checkPattern: (String) -> String?
    private var depth = 0

    init(_ text: String, checkPattern: @escaping (String) -> String?) {
        characters = Array(text)
        self.checkPattern = checkPattern
    }

    private enum Token: Equatable {
        case word(String)
        case quoted(String)
        case symbol(Character)
        /// A quote that is never closed.
        case unclosed
        case end
    }

    /// The next token and the character (from 1) it starts at, without taking it.
    private func peek() -> (Token, Int, Int) {
        var index = at
        while index < characters.count, characters[index].isWhitespace { index += 1 }
        guard index < characters.count else { return (.end, index + 1, index) }
        let first = characters[index]
        if "()~=<>".contains(first) { return (.symbol(first), index + 1, index + 1) }
        if first == "\"" || first == "'" {
            // No escapes: a value holding one kind of quote is written in the other.
            var end = index + 1
            while end < characters.count, characters[end] != first { end += 1 }
            guard end < characters.count else { return (.unclosed, index + 1, end) }
            return (.quoted(String(characters[(index + 1)..<end])), index + 1, end + 1)
        }
        var end = index
        while end < characters.count, !characters[end].isWhitespace, !"()~=<>\"'".contains(characters[end]) {
            end += 1
        }
        return (.word(String(characters[index..<end])), index + 1, end)
    }

    private mutating func take() -> (Token, Int) {
        let (token, position, next) = peek()
        at = next
        return (token, position)
    }

    private func keyword(_ token: Token, _ name: String) -> Bool {
        if case .word(let word) = token { return word.lowercased() == name }
        return false
    }

    private func shown(_ token: Token) -> String {
        switch token {
        case .word(let word): "\"\(word)\""
        case .quoted(let text): "\"\(text)\""
        case .symbol(let symbol): "\"\(symbol)\""
        case .unclosed: "a quote never closed"
        case .end: "the end"
        }
    }

    mutating func whole() throws(ConditionError) -> Condition {
        if case .end = peek().0 {
            throw ConditionError(position: 1, "it is empty; write one such as: title ~ sponsored")
        }
        let condition = try or()
        let (token, position, _) = peek()
        guard token == .end else {
            throw ConditionError(
                position: position,
                token == .symbol(")")
                    ? "this \")\" closes no \"(\""
                    : "expected \"and\", \"or\" or the end, found \(shown(token))")
        }
        return condition
    }

    private mutating func or() throws(ConditionError) -> Condition {
        var condition = try and()
        while keyword(peek().0, "or") {
            _ = take()
            condition = .or(condition, try and())
        }
        return condition
    }

    private mutating func and() throws(ConditionError) -> Condition {
        var condition = try unary()
        while keyword(peek().0, "and") {
            _ = take()
            condition = .and(condition, try unary())
        }
        return condition
    }

    private mutating func unary() throws(ConditionError) -> Condition {
        let (token, position) = take()
        depth += 1
        defer { depth -= 1 }
        guard depth <= 100 else { throw ConditionError(position: position, "it nests deeper than 100") }
        if keyword(token, "not") { return .not(try unary()) }
        if token == .symbol("(") {
            let inner = try or()
            let (closing, at) = take()
            guard closing == .symbol(")") else {
                throw ConditionError(
                    position: at, "expected \")\" to close the \"(\" at character \(position), found \(shown(closing))")
            }
            return inner
        }
        guard case .word(let word) = token else {
            throw ConditionError(position: position, "expected a field (\(Self.fieldNames)), found \(shown(token))")
        }
        let name = word.lowercased()
        switch name {
        case "unread": return .unread
        case "read": return .not(.unread)
        case "starred": return .starred
        case "age", "date": return try timeTest(name, at: position)
        default: break
        }
        guard let field = Self.textField(name) else {
            throw ConditionError(position: position, "expected a field (\(Self.fieldNames)), found \(shown(token))")
        }
        let (operation, operationAt) = take()
        guard operation == .symbol("~") || operation == .symbol("=") else {
            throw ConditionError(
                position: operationAt, "expected \"~\" or \"=\" after \(word), found \(shown(operation))")
        }
        let (value, text, valueAt) = try self.value(after: operation)
        if operation == .symbol("=") { return .equals(field, text) }
        guard text.count <= Condition.maxPatternLength else {
            throw ConditionError(
                position: valueAt, "the pattern is longer than \(Condition.maxPatternLength) characters")
        }
        if let problem = checkPattern(text) {
            throw ConditionError(position: valueAt, "the pattern \(shown(value)) cannot be used: \(problem)")
        }
        return .matches(field, text)
    }

    private mutating func value(after operation: Token) throws(ConditionError) -> (Token, String, Int) {
        let (value, position) = take()
        switch value {
        case .unclosed: throw ConditionError(position: position, "this quote is never closed")
        case .quoted(let text), .word(let text): return (value, text, position)
        default:
            throw ConditionError(
                position: position,
                "expected a value after \(shown(operation)), found \(shown(value)) (quote a value holding spaces or ( ) ~ = < >)"
            )
        }
    }

    private mutating func timeTest(_ name: String, at position: Int) throws(ConditionError) -> Condition {
        let (operation, operationAt) = take()
        guard operation == .symbol("<") || operation == .symbol(">") else {
            throw ConditionError(
                position: operationAt, "expected \"<\" or \">\" after \(name), found \(shown(operation))")
        }
        let (_, text, valueAt) = try value(after: operation)
        let less = operation == .symbol("<")
        if name == "age" {
            guard let seconds = Self.duration(text) else {
                throw ConditionError(
                    position: valueAt, "\"\(text)\" is not an age: write a number and m, h, d or w, as 30d")
            }
            return less ? .youngerThan(seconds) : .olderThan(seconds)
        }
        guard let time = Self.date(text) else {
            throw ConditionError(
                position: valueAt, "\"\(text)\" is not a date: write 2026-01-31 or 2026-01-31T08:00:00Z")
        }
        return less ? .older(time) : .newer(time)
    }

    static let fieldNames = "title, content, author, link, feed, categories, age, date, unread, read, starred"

    static func textField(_ name: String) -> TextField? {
        switch name {
        case "category", "categories", "tag", "tags": .categories
        default: TextField(rawValue: name)
        }
    }

    /// `30d`, `12h`, `90m`, `2w`: seconds; nil for anything else or past ten years.
    static func duration(_ text: String) -> Int64? {
        guard let unit = text.last, let number = Int64(text.dropLast()), number >= 0, number <= 10 * 365 * 24 * 60
        else { return nil }
        let seconds: Int64? =
            switch unit {
            case "m": 60
            case "h": 3600
            case "d": 86400
            case "w": 7 * 86400
            default: nil
            }
        return seconds.map { $0 * number }.flatMap { $0 <= 10 * 366 * 86400 ? $0 : nil }
    }

    /// A day (UTC midnight) or an ISO 8601 time: Unix seconds.
    static func date(_ text: String) -> Int64? {
        let day = /(\d{4})-(\d{2})-(\d{2})/
        if let match = text.wholeMatch(of: day), let year = Int(match.1), let month = Int(match.2),
            let date = Int(match.3), (1970...9999).contains(year), (1...12).contains(month), (1...31).contains(date)
        {
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = TimeZone(identifier: "UTC")!
            let components = DateComponents(year: year, month: month, day: date)
            guard calendar.date(from: components).map({ calendar.component(.day, from: $0) == date }) == true else {
                return nil
            }
            return calendar.date(from: components).map { Int64($0.timeIntervalSince1970) }
        }
        return (try? Date.ISO8601FormatStyle().parse(text)).map { Int64($0.timeIntervalSince1970) }
    }
}
