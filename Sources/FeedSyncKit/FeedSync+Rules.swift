import FeedSyncModel
import FeedSyncStore
import Foundation

// Rules (hide, mark read, star what matches, on arrival and at once) and saved views (a named
// condition listed beside the feeds): the use cases every front end calls.

extension FeedSync {
    /// `text` read as a condition (docs/usage.md, Rules); a usage error naming where it went wrong.
    public static func condition(_ text: String) throws(SyncError) -> Condition {
        do {
            return try Store.condition(text)
        } catch {
            throw SyncError(.usage, error.description)
        }
    }

    public func rules() async throws(StoreError) -> [Rule] { try await store.rules() }

    /// Adds a rule on `feed`, on `folder` (and the folders inside it) or on every feed, and applies
    /// it to the items stored: its number, and how many items it matched.
    public func addRule(_ action: RuleAction, when text: String, feed: Feed?, folder: String?) async throws
        -> (number: Int64, matched: Int)
    {
        let condition = try Self.condition(text)
        return try await store.addRule(action, condition, text: text, feedID: feed?.id, folder: folder)
    }

    /// Removes rule `number`: how many items it had hidden are shown again.
    public func removeRule(number: Int64) async throws -> Int {
        let (found, shown) = try await store.removeRule(number: number)
        guard found else { throw SyncError(.usage, "no rule is numbered \(number); feedsync rule list lists them") }
        return shown
    }

    /// The items shown that `text` matches (of `feed`, of `folder`), newest first (at most
    /// `limit`), and how many there are: what a rule would take, changing nothing.
    public func matching(_ text: String, feed: Feed? = nil, folder: String? = nil, limit: Int) async throws -> (
        count: Int, items: [StoredItem]
    ) {
        try await store.itemsMatching(try Self.condition(text), feedURL: feed?.url, folder: folder, limit: limit)
    }

    /// The saved views, by name; with `counting`, each with its unread count.
    public func views(counting: Bool) async throws(StoreError) -> [SavedView] {
        try await store.views(counting: counting)
    }

    /// Saves a view of what `text` matches under `name`.
    public func addView(name: String, when text: String) async throws {
        let condition = try Self.condition(text)
        guard (1...200).contains(name.unicodeScalars.count), !name.unicodeScalars.contains(where: SafeText.isUnsafe)
        else {
            throw SyncError(.usage, "a view's name must be one line of at most 200 characters")
        }
        guard try await store.addView(name: name, condition, text: text) else {
            throw SyncError(.usage, "a view is named \(name) already; feedsync view remove \(name) first")
        }
    }

    public func removeView(name: String) async throws {
        guard try await store.removeView(name: name) else { throw Self.noView(name) }
    }

    /// `query` narrowed to the view named `name` (letter case aside, as the store compares names:
    /// ASCII's), its ages measured from now.
    public func query(_ query: ListQuery, inView name: String) async throws -> ListQuery {
        guard let view = try await store.view(named: name) else { throw Self.noView(name) }
        var query = query
        query.condition = try Self.condition(view.condition).resolved(now: Int64(clock.now().timeIntervalSince1970))
        return query
    }

    private static func noView(_ name: String) -> SyncError {
        SyncError(.usage, "no view is named \(name); feedsync view list lists them")
    }
}
