import FeedSyncFeed
import Foundation
import GRDB

/// A feed with its counts, as `feeds` shows it.
public struct FeedSummary: Sendable {
    public var feed: Feed
    public var items: Int
    public var unread: Int
}

/// One item whole, as `show` shows it.
public struct ItemDetail: Sendable {
    public var item: StoredItem
    public var summary: String?
    /// The item's full content as stored (HTML), if the feed gave one.
    public var content: String?
}

extension Store {
    /// Every feed with its item and unread counts, in the order they were added. The counts come
    /// from `band_size` and the triggers' `read_count`: no feed's items are scanned.
    public func feedSummaries() throws(StoreError) -> [FeedSummary] {
        try read { db in
            // A cursor, not fetchAll: a copied row finds a column by name by lowering the case of
            // every name it holds, and a feed has thirty (a fifth of `feeds`' time for 1 000 feeds).
            try Array(
                Row.fetchCursor(
                    db,
                    sql: """
                        SELECT feed.*, coalesce((SELECT sum(size) FROM band_size WHERE feed_id = feed.id), 0) AS items
                        FROM feed ORDER BY id
                        """
                ).map { row in
                    let items = row.integer("items", in: 0...Int(Int32.max)) ?? 0
                    let read = row.integer("read_count", in: 0...Int(Int32.max)) ?? 0
                    return FeedSummary(feed: Feed(row: row), items: items, unread: max(0, items - read))
                })
        }
    }

    /// Gives the feed a title of the user's, or with nil gives it back its own.
    public func rename(feedID: Int64, title: String?) throws(StoreError) {
        try write { db in
            try db.execute(sql: "UPDATE feed SET custom_title = ? WHERE id = ?", arguments: [title, feedID])
        }
    }

    /// Unsubscribes: the feed, its items, and the pictures no item uses any more go, in one
    /// transaction. Returns the files of the pictures that went, for the caller to delete.
    public func removeFeed(id: Int64) throws(StoreError) -> [String] {
        try write { db in
            // Items (and their band sizes) go with the feed: ON DELETE CASCADE.
            try db.execute(sql: "DELETE FROM feed WHERE id = ?", arguments: [id])
            return try Self.deleteUnusedPictures(db)
        }
    }

    /// The item numbered `number`, whole, or nil when there is none.
    public func item(number: Int64) throws(StoreError) -> ItemDetail? {
        try read { db in
            try Row.fetchOne(
                db,
                sql: "SELECT \(Self.listColumns), summary, content FROM item \(Self.listJoin) WHERE item.id = ?",
                arguments: [number]
            ).map { row in
                ItemDetail(
                    item: Self.storedItem(row, position: 0),
                    summary: row.text("summary"), content: row.text("content"))
            }
        }
    }

    /// Marks the items numbered `numbers` read (or unread); returns the numbers that name no item.
    public func mark(_ numbers: [Int64], read: Bool) throws(StoreError) -> [Int64] {
        try write { db in
            let update = try db.cachedStatement(sql: "UPDATE item SET read = ? WHERE id = ?")
            var missing: [Int64] = []
            for number in numbers {
                try update.execute(arguments: [read, number])
                // An UPDATE counts every row its WHERE matched, changed or not.
                if db.changesCount == 0 { missing.append(number) }
            }
            return missing
        }
    }

    /// Marks every item read (or unread), or only `feedID`'s, or only those published (or, with no
    /// date, placed in the timeline) before `before`; returns how many changed.
    public func markAll(read: Bool, feedID: Int64?, before: Date?) throws(StoreError) -> Int {
        try write { db in
            var conditions = ["read != ?"]
            var arguments: StatementArguments = [read, read]
            if let feedID {
                conditions.append("feed_id = ?")
                arguments += [feedID]
            }
            if let before {
                conditions.append("timeline < ?")
                arguments += [before.timeIntervalSince1970]
            }
            try db.execute(
                sql: "UPDATE item SET read = ? WHERE \(conditions.joined(separator: " AND "))", arguments: arguments)
            return db.changesCount
        }
    }
}
