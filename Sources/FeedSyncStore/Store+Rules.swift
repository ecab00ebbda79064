internal import CRegex
import FeedSyncFeed
import FeedSyncMarkup
import FeedSyncModel
import Foundation
import GRDB
import Synchronization

// Rules and saved views: their conditions run as SQL over what is stored (a view's list and count,
// a rule added, `rule test`) and in Swift over a page's items as they arrive (writeItems), with the
// same text functions and the same RE2 patterns either way.

/// RE2 patterns, each compiled once a process. RE2 matches in time linear in the text whatever the
/// pattern: a pattern from the user never runs away on text from strangers.
enum Patterns {
    final class Compiled: @unchecked Sendable {
        let regex: OpaquePointer?
        let problem: String?
        init(_ pattern: String) {
            var error = [CChar](repeating: 0, count: 200)
            let bytes = Array(pattern.utf8)
            regex = fs_regex_compile(bytes, bytes.count, 1, &error, error.count)
            problem =
                regex == nil
                ? String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : nil
        }
        deinit { if let regex { fs_regex_free(regex) } }

        func matches(_ text: String) -> Bool {
            guard let regex else { return false }
            var text = text
            return text.withUTF8 { fs_regex_matches(regex, $0.baseAddress, $0.count) == 1 }
        }
    }

    /// Several patterns, matched in one pass over a text (RE2::Set).
    final class CompiledSet: @unchecked Sendable {
        let set: OpaquePointer?
        let count: Int
        init(_ patterns: [String]) {
            count = patterns.count
            var bytes = patterns.map { Array($0.utf8) }
            let lengths = bytes.map(\.count)
            set = bytes.withUnsafeMutableBufferPointer { all in
                var pointers = all.map { $0.withUnsafeBufferPointer { $0.baseAddress.map { UnsafeRawPointer($0) } } }
                return pointers.withUnsafeMutableBufferPointer { list in
                    list.withMemoryRebound(to: UnsafePointer<CChar>?.self) {
                        fs_regex_set_compile($0.baseAddress, lengths, Int32(patterns.count))
                    }
                }
            }
        }
        deinit { if let set { fs_regex_set_free(set) } }

        /// Which of the patterns match anywhere in `text`; nil when RE2 could not tell.
        func matched(_ text: String) -> [UInt8]? {
            guard let set else { return nil }
            var hits = [UInt8](repeating: 0, count: count)
            var text = text
            let answer = text.withUTF8 { fs_regex_set_match(set, $0.baseAddress, $0.count, &hits, Int32(count)) }
            return answer == 0 ? hits : nil
        }
    }

    private static let compiled = Mutex<[String: Compiled]>([:])
    private static let compiledSets = Mutex<[[String]: CompiledSet]>([:])

    /// What `cache` keeps for `key`, made and kept when it has none. Patterns are a person's few;
    /// a cache past `limit` (a process that met many) starts over.
    private static func kept<Key: Hashable & Sendable, Value: Sendable>(
        _ cache: borrowing Mutex<[Key: Value]>, _ key: Key, limit: Int, _ make: (Key) -> Value
    ) -> Value {
        cache.withLock { known in
            if let found = known[key] { return found }
            if known.count >= limit { known.removeAll() }
            let made = make(key)
            known[key] = made
            return made
        }
    }

    /// `patterns` as one set, compiled once a process.
    static func compileSet(_ patterns: [String]) -> CompiledSet {
        kept(compiledSets, patterns, limit: 100, CompiledSet.init)
    }

    static func compile(_ pattern: String) -> Compiled { kept(compiled, pattern, limit: 1000, Compiled.init) }

    /// Why RE2 refuses `pattern`, or nil.
    static func problem(_ pattern: String) -> String? { compile(pattern).problem }

    /// Whether `pattern` matches anywhere in `text`, ignoring case unless it says `(?-i)`.
    static func matches(_ pattern: String, _ text: String) -> Bool { compile(pattern).matches(text) }

    /// The SQL functions the conditions' SQL calls, on every connection of the store.
    static let functions: [DatabaseFunction] = [
        DatabaseFunction("rule_matches", argumentCount: 2, pure: true) { values in
            guard let pattern = String.fromDatabaseValue(values[0]), let text = String.fromDatabaseValue(values[1])
            else { return false }
            return matches(pattern, text)
        },
        DatabaseFunction("rule_any_matches", argumentCount: 2, pure: true) { values in
            guard let pattern = String.fromDatabaseValue(values[0]), let lines = String.fromDatabaseValue(values[1])
            else { return false }
            return lines.split(separator: "\n").contains { matches(pattern, String($0)) }
        },
        DatabaseFunction("rule_same", argumentCount: 2, pure: true) { values in
            guard let value = String.fromDatabaseValue(values[0]), let text = String.fromDatabaseValue(values[1])
            else { return false }
            return Condition.same(text, value)
        },
        DatabaseFunction("rule_any_same", argumentCount: 2, pure: true) { values in
            guard let value = String.fromDatabaseValue(values[0]), let lines = String.fromDatabaseValue(values[1])
            else { return false }
            return lines.split(separator: "\n").contains { Condition.same(String($0), value) }
        },
        DatabaseFunction("rule_content", argumentCount: 2, pure: true) { values in
            Store.ruleContent(
                searchBody: SearchText.body(
                    content: String.fromDatabaseValue(values[0]), summary: String.fromDatabaseValue(values[1])))
        },
    ]
}

extension Store {
    /// An item's `content` as a condition reads it: the text the search index holds (its content
    /// as plain text, the first 32 768 characters, else its summary), CJK unspaced again.
    static func ruleContent(searchBody: String) -> String { SearchText.unspaced(searchBody) }

    /// `condition` (its ages `resolved` to times) as an SQL expression over `item`, joined to
    /// nothing, with its arguments.
    static func sql(_ condition: Condition) -> (String, [(any DatabaseValueConvertible)?]) {
        func text(_ field: TextField, _ value: String, any: String, one: String) -> (
            String, [(any DatabaseValueConvertible)?]
        ) {
            switch field {
            case .title: ("\(one)(?, item.title)", [value])
            case .content: ("\(one)(?, rule_content(item.content, item.summary))", [value])
            case .author: ("\(one)(?, item.author)", [value])
            case .link: ("\(one)(?, item.link)", [value])
            case .categories: ("\(any)(?, item.categories)", [value])
            case .feed:
                // Once a feed, not once an item: SQLite makes the list of feeds first.
                (
                    "item.feed_id IN (SELECT id FROM feed WHERE \(one)(?, \(feedName)) OR \(one)(?, url))",
                    [value, value]
                )
            }
        }
        switch condition {
        case .matches(let field, let pattern): return text(field, pattern, any: "rule_any_matches", one: "rule_matches")
        case .equals(let field, let value): return text(field, value, any: "rule_any_same", one: "rule_same")
        case .newer(let time): return ("item.timeline > ?", [time])
        case .older(let time): return ("item.timeline < ?", [time])
        case .youngerThan, .olderThan: preconditionFailure("an age is resolved to a time before it becomes SQL")
        case .unread: return ("item.read = 0", [])
        case .starred: return ("item.starred = 1", [])
        case .not(let inner):
            let (sql, arguments) = Self.sql(inner)
            return ("NOT (\(sql))", arguments)
        case .and, .or:
            // A chain of one kind written flat: nested, a hundred terms overflow SQLite's parser.
            let isAnd = if case .and = condition { true } else { false }
            func terms(_ node: Condition) -> [Condition] {
                switch (node, isAnd) {
                case (.and(let a, let b), true), (.or(let a, let b), false): terms(a) + terms(b)
                default: [node]
                }
            }
            let parts = terms(condition).map(Self.sql)
            return (
                parts.map { "(\($0.0))" }.joined(separator: isAnd ? " AND " : " OR "), parts.flatMap(\.1)
            )
        }
    }

    /// `text` parsed, its patterns checked by RE2.
    public static func condition(_ text: String) throws(ConditionError) -> Condition {
        try Condition.parse(text, checkPattern: Patterns.problem)
    }

    /// The rules' conditions, each parsed once a process: a pull reads them for every page.
    private static let parsed = Mutex<[String: Condition]>([:])

    static func storedCondition(_ text: String) -> Condition? {
        if let known = parsed.withLock({ $0[text] }) { return known }
        // One that no longer parses (a newer feedsync's) is nil: its rule does nothing.
        guard let condition = try? condition(text) else { return nil }
        parsed.withLock { known in
            if known.count >= 1000 { known.removeAll() }
            known[text] = condition
        }
        return condition
    }

    /// The SQL choosing a rule's feeds, on `item`.
    static func scope(feedID: Int64?, folder: String?) -> (String, [(any DatabaseValueConvertible)?]) {
        if let feedID { return ("item.feed_id = ?", [feedID]) }
        if let folder {
            return (
                "item.feed_id IN (SELECT id FROM feed WHERE folder = ? OR substr(folder, 1, length(?) + 1) = ? || '/')",
                [folder, folder, folder]
            )
        }
        return ("1", [])
    }

    /// The rules, in the order they were added.
    public func rules() async throws(StoreError) -> [Rule] {
        try await read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT rule.id, action, condition, feed.url, rule.folder FROM rule
                    LEFT JOIN feed ON feed.id = rule.feed_id ORDER BY rule.id
                    """
            ).map { row in
                Rule(
                    number: row[0], action: RuleAction(rawValue: row[1]) ?? .hide, condition: row[2],
                    feedURL: row[3], folder: row[4])
            }
        }
    }

    /// Adds a rule and applies it to the items stored, in one transaction; how many it matched.
    public func addRule(_ action: RuleAction, _ condition: Condition, text: String, feedID: Int64?, folder: String?)
        async throws(StoreError) -> (number: Int64, matched: Int)
    {
        try await write { db in
            try db.execute(
                sql: "INSERT INTO rule (action, condition, feed_id, folder, added_at) VALUES (?, ?, ?, ?, ?)",
                arguments: [action.rawValue, text, feedID, folder, clock.now().timeIntervalSince1970])
            let number = db.lastInsertedRowID
            let (scope, scoped) = Self.scope(feedID: feedID, folder: folder)
            let (matching, arguments) = Self.sql(condition.resolved(now: Int64(clock.now().timeIntervalSince1970)))
            let filter = "(\(scope)) AND (\(matching))"
            let values = scoped + arguments
            switch action {
            case .hide:
                try db.execute(
                    sql:
                        "CREATE TEMP TABLE changed AS SELECT id, feed_id, band FROM item WHERE hidden = 0 AND \(filter)",
                    arguments: StatementArguments(values))
                defer { try? db.execute(sql: "DROP TABLE IF EXISTS temp.changed") }
                let count = try Int.fetchOne(db, sql: "SELECT count(*) FROM temp.changed") ?? 0
                try db.execute(
                    sql:
                        "UPDATE item SET hidden = 1, hidden_by = ?, seq = -id WHERE id IN (SELECT id FROM temp.changed)",
                    arguments: [number])
                try Self.closeUp(db, "temp.changed")
                return (number, count)
            case .read, .star:
                let column = action == .read ? "read" : "starred"
                let own = "item.\(column) = 0 AND \(filter)"
                try queueMarks(db, field: column, value: true, where: own, values)
                try db.execute(sql: "UPDATE item SET \(column) = 1 WHERE \(own)", arguments: StatementArguments(values))
                return (number, db.changesCount)
            }
        }
    }

    /// Removes rule `number`; the items it hid are shown again, each in its place, but those
    /// another hide rule matches, which that rule holds from then on. Whether there was such a
    /// rule, and how many items came back.
    public func removeRule(number: Int64) async throws(StoreError) -> (found: Bool, shown: Int) {
        try await write { db in
            guard
                let removed = try Row.fetchOne(
                    db, sql: "DELETE FROM rule WHERE id = ? RETURNING action, feed_id, folder", arguments: [number])
            else { return (false, 0) }
            guard removed[0] as String == RuleAction.hide.rawValue else { return (true, 0) }
            let now = Int64(clock.now().timeIntervalSince1970)
            for other in try Row.fetchAll(
                db, sql: "SELECT id, condition, feed_id, folder FROM rule WHERE action = 'hide' ORDER BY id")
            {
                // A rule that no longer parses (a newer feedsync's) hides nothing.
                guard let condition = Self.storedCondition(other[1]) else { continue }
                let (scope, scoped) = Self.scope(feedID: other[2], folder: other[3])
                let (matching, arguments) = Self.sql(condition.resolved(now: now))
                try db.execute(
                    sql:
                        "UPDATE item SET hidden_by = ? WHERE hidden = 1 AND hidden_by = ? AND (\(scope)) AND (\(matching))",
                    arguments: StatementArguments([other[0], number] + scoped + arguments))
            }
            try db.execute(
                sql:
                    "CREATE TEMP TABLE changed AS SELECT id, feed_id, band FROM item WHERE hidden = 1 AND hidden_by = ?",
                arguments: [number])
            defer { try? db.execute(sql: "DROP TABLE IF EXISTS temp.changed") }
            let count = try Int.fetchOne(db, sql: "SELECT count(*) FROM temp.changed") ?? 0
            // Placed again by their numbers, which follow the order a band's items came in.
            try db.execute(
                sql: "UPDATE item SET hidden = 0, hidden_by = NULL WHERE id IN (SELECT id FROM temp.changed)")
            try Self.closeUp(db, "temp.changed", order: "item.id")
            return (true, count)
        }
    }

    /// After items left the lists or came back (their ids, feeds and bands in `changed`): each
    /// such band's shown items numbered again from 0 in `order`, the band sizes, timeline runs
    /// and read counts of their feeds made again.
    static func closeUp(_ db: Database, _ changed: String, order: String = "item.seq") throws {
        try db.execute(
            sql: """
                CREATE TEMP TABLE renumbered AS
                    SELECT item.id, row_number() OVER (PARTITION BY item.feed_id, item.band ORDER BY \(order)) - 1 AS seq
                    FROM item WHERE item.hidden = 0 AND (item.feed_id, item.band) IN (SELECT feed_id, band FROM \(changed));
                -- Out of the way first, below every hidden item's -id, so no two rows meet on a seq.
                UPDATE item SET seq = -1099511627776 - id WHERE id IN (SELECT id FROM temp.renumbered);
                UPDATE item SET seq = renumbered.seq FROM temp.renumbered WHERE renumbered.id = item.id;
                DROP TABLE temp.renumbered;
                UPDATE band_size SET size = (
                    SELECT count(*) FROM item
                    WHERE item.feed_id = band_size.feed_id AND item.band = band_size.band AND item.hidden = 0)
                WHERE (feed_id, band) IN (SELECT feed_id, band FROM \(changed));
                INSERT INTO band_size (feed_id, band, size)
                    SELECT feed_id, band, count(*) FROM item
                    WHERE hidden = 0 AND (feed_id, band) IN (SELECT feed_id, band FROM \(changed))
                    GROUP BY feed_id, band
                    ON CONFLICT (feed_id, band) DO NOTHING;
                DELETE FROM timeline_run WHERE feed_id IN (SELECT feed_id FROM \(changed));
                INSERT INTO timeline_run (timeline, feed_id, band, first_seq, size)
                    SELECT timeline, feed_id, band, min(seq), count(*) FROM (
                        SELECT timeline, feed_id, band, seq,
                            seq - row_number() OVER (PARTITION BY feed_id, band, timeline ORDER BY seq) AS island
                        FROM item WHERE hidden = 0 AND feed_id IN (SELECT feed_id FROM \(changed))
                    ) GROUP BY timeline, feed_id, band, island;
                UPDATE feed SET read_count = (SELECT count(*) FROM item WHERE feed_id = feed.id AND read = 1 AND hidden = 0)
                WHERE id IN (SELECT feed_id FROM \(changed));
                """)
    }

    /// The items shown that `condition` matches (of one feed, of a folder), newest first.
    public func itemsMatching(_ condition: Condition, feedURL: String?, folder: String?, limit: Int)
        async throws(StoreError) -> (count: Int, items: [StoredItem])
    {
        let query = ListQuery(
            feedURL: feedURL, folder: folder,
            condition: condition.resolved(now: Int64(clock.now().timeIntervalSince1970)))
        return try await read { db in
            let (total, items) = try Self.filteredList(db, query, offset: 0, limit: limit)
            return (total, items)
        }
    }

    /// The saved views, by name, with their unread counts when `counting`: a view that keeps its
    /// items has its count kept too; another's is its query's.
    public func views(counting: Bool) async throws(StoreError) -> [SavedView] {
        let now = Int64(clock.now().timeIntervalSince1970)
        return try await read { db in
            try Row.fetchAll(db, sql: "SELECT name, condition, kept, unread FROM saved_view ORDER BY name").map { row in
                var view = SavedView(name: row[0], condition: row[1])
                if counting, row[2] == true {
                    view.unread = row[3]
                } else if counting, let condition = Self.storedCondition(view.condition) {
                    view.unread = try Self.filteredTotal(
                        db, ListQuery(unread: true, condition: condition.resolved(now: now)))
                }
                return view
            }
        }
    }

    /// Saves a view of what `condition` (its text `text`) matches; a view that reads only the
    /// items' words finds its items among those stored at once, in the same transaction. False
    /// when a view of that name exists.
    public func addView(name: String, _ condition: Condition, text: String) async throws(StoreError) -> Bool {
        try await write { db in
            let kept = condition.readsOnlyTheItemsWords
            try db.execute(
                sql: """
                    INSERT INTO saved_view (name, condition, kept, added_at) VALUES (?, ?, ?, ?)
                    ON CONFLICT (name) DO NOTHING
                    """,
                arguments: [name, text, kept, clock.now().timeIntervalSince1970])
            guard db.changesCount == 1 else { return false }
            if kept {
                let (matching, arguments) = Self.sql(condition)
                try db.execute(
                    sql: "INSERT INTO view_item (view_id, item_id) SELECT ?, item.id FROM item WHERE \(matching)",
                    arguments: StatementArguments([db.lastInsertedRowID] + arguments))
            }
            return true
        }
    }

    /// The view named `name`, letter case aside (ASCII's, as the name's column compares).
    public func view(named name: String) async throws(StoreError) -> SavedView? {
        try await read { db in
            try Row.fetchOne(db, sql: "SELECT name, condition FROM saved_view WHERE name = ?", arguments: [name])
                .map { SavedView(name: $0[0], condition: $0[1]) }
        }
    }

    /// Removes the view named `name`; false when there is none.
    public func removeView(name: String) async throws(StoreError) -> Bool {
        try await write { db in
            try db.execute(sql: "DELETE FROM saved_view WHERE name = ?", arguments: [name])
            return db.changesCount == 1
        }
    }
}

/// The rules that apply to one feed's arriving items, and the views that keep their items, read
/// once a page: each item is asked in Swift before it is written, so a hidden item takes no place
/// in its list, a marked one is stored marked and a view's is in it, in the page's own transaction.
final class ArrivalRules {
    private var rules: [(number: Int64, action: RuleAction, condition: Condition)] = []
    private var feedName = ""
    private var feedURL = ""
    private let now: Int64
    let isAccount: Bool
    /// Each pattern compiled, and what the feed's name and address give each pattern a `feed`
    /// test holds: the same for every item of the feed, so matched once a page.
    private var compiled: [String: Patterns.Compiled] = [:]
    private var feedHits: [(pattern: String, name: Bool, url: Bool)] = []
    private var readsContent = false
    /// The patterns of each other field, matched in one pass a text, that text's answers kept
    /// while the next test is of the same text (an item's rules ask it one after another).
    private final class FieldPatterns {
        let set: Patterns.CompiledSet
        let patterns: [String]
        var text: String?
        var hits: [UInt8]?
        init(_ patterns: [String]) {
            set = Patterns.compileSet(patterns)
            self.patterns = patterns
        }
    }
    /// By `TextField.allCases`' order. Looked up by position, and a pattern by `==` among a few
    /// (the tree's strings are the very ones listed: Swift's identity fast path): no hashing in
    /// what runs for every rule and item.
    private var fields: [FieldPatterns?] = []

    /// The views that keep their items, each found among the arriving items as a rule is.
    private var views: [(id: Int64, condition: Condition)] = []

    init(_ db: Database, feedID: Int64, now: Int64) throws {
        self.now = now
        for row in try Row.fetchAll(
            db.cachedStatement(sql: "SELECT id, condition FROM saved_view WHERE kept = 1 ORDER BY id"))
        {
            if let condition = Store.storedCondition(row[1]) { views.append((row[0], condition)) }
        }
        let rows = try Row.fetchAll(
            db.cachedStatement(
                sql: """
                    SELECT rule.action, rule.condition, \(Store.feedName), feed.url, rule.id,
                        feed.account_id IS NOT NULL
                    FROM feed JOIN rule ON rule.feed_id = feed.id
                        OR (rule.feed_id IS NULL AND (rule.folder IS NULL OR feed.folder = rule.folder
                            OR substr(feed.folder, 1, length(rule.folder) + 1) = rule.folder || '/'))
                    WHERE feed.id = ? ORDER BY rule.id
                    """), arguments: [feedID])
        isAccount = rows.first?[5] ?? false
        if let first = rows.first { (feedName, feedURL) = (first[2], first[3]) }
        for row in rows {
            guard let action = RuleAction(rawValue: row[0]), let condition = Store.storedCondition(row[1]) else {
                continue
            }
            rules.append((row[4], action, condition))
        }
        let conditions = rules.map(\.condition) + views.map(\.condition)
        readsContent = conditions.contains(where: \.readsContent)
        for (field, pattern) in conditions.flatMap(Self.patterns) {
            let made = Patterns.compile(pattern)
            compiled[pattern] = made
            if field == .feed { feedHits.append((pattern, made.matches(feedName), made.matches(feedURL))) }
        }
        var byField: [TextField: [String]] = [:]
        for (field, pattern) in conditions.flatMap(Self.patterns) where field != .feed {
            if byField[field]?.contains(pattern) != true { byField[field, default: []].append(pattern) }
        }
        fields = TextField.allCases.map { field in byField[field].map(FieldPatterns.init) }
    }

    /// The `~` tests of `condition`: each field and pattern.
    private static func patterns(_ condition: Condition) -> [(TextField, String)] {
        switch condition {
        case .matches(let field, let pattern): [(field, pattern)]
        case .not(let inner): patterns(inner)
        case .and(let a, let b), .or(let a, let b): patterns(a) + patterns(b)
        default: []
        }
    }

    private func matches(_ field: TextField, _ pattern: String, _ text: String) -> Bool {
        // `==` of the very strings handed to the subject takes Swift's identity fast path.
        if field == .feed, let hits = feedHits.first(where: { $0.pattern == pattern }) {
            return text == feedName ? hits.name : hits.url
        }
        if let group = fields[TextField.allCases.firstIndex(of: field)!],
            let index = group.patterns.firstIndex(of: pattern)
        {
            if group.text != text { (group.text, group.hits) = (text, group.set.matched(text)) }
            if let hits = group.hits { return hits[index] == 1 }
        }
        return compiled[pattern]?.matches(text) ?? Patterns.matches(pattern, text)
    }

    var isEmpty: Bool { rules.isEmpty && views.isEmpty }

    /// What the rules do to `item`, placed at `time` in the timeline (`rules`: false for an item
    /// stored before), and the kept views it is in.
    func apply(to item: FeedItem, time: Int64, rules applying: Bool) -> (
        actions: Set<RuleAction>, hiddenBy: Int64?, views: [Int64]
    ) {
        let content =
            readsContent
            ? Store.ruleContent(
                searchBody: item.searchBody ?? SearchText.body(content: item.content, summary: item.summary)) : ""
        let subject = ConditionSubject(
            title: item.title, content: content, author: item.author, link: item.link, feedName: feedName,
            feedURL: feedURL,
            categories: item.categories, time: time, unread: true, starred: false)
        var actions = Set<RuleAction>()
        var hiddenBy: Int64?
        for rule in rules where applying && !actions.contains(rule.action) {
            guard rule.condition.holds(for: subject, now: now, matches: matches) else { continue }
            actions.insert(rule.action)
            if rule.action == .hide { hiddenBy = rule.number }
        }
        let inViews = views.filter { $0.condition.holds(for: subject, now: now, matches: matches) }.map(\.id)
        return (actions, hiddenBy, inViews)
    }
}
