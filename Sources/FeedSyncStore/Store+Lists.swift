internal import CFeedSyncSystem
import FeedSyncFeed
import FeedSyncMarkup
import FeedSyncModel
import Foundation
import GRDB
import Synchronization

// The lists `list` and the reading page show, and where the reader is.

extension Store {
    /// The row (0-based) the item numbered `number` is at now in one feed's list or the timeline;
    /// nil when there is no such item.
    public func row(ofItem number: Int64, feedURL: String?) async throws(StoreError) -> Int? {
        try await read { db in
            guard
                let place = try Row.fetchOne(
                    db, sql: "SELECT feed_id, band, seq FROM item WHERE id = ?", arguments: [number]
                ).map(ListPlace.init(row:))
            else { return nil }
            return try Self.row(db, of: place, in: ListOrder(feedURL: feedURL))
        }
    }

    /// One page of the list `query` describes.
    public func list(_ query: ListQuery, page: Int, perPage: Int) async throws(StoreError) -> ListedPage {
        try await read { db in
            let offset = (page - 1) * perPage
            let total: Int
            let items: [StoredItem]
            if query.isFiltered {
                (total, items) = try Self.filteredList(db, query, offset: offset, limit: perPage)
            } else {
                let order = ListOrder(feedURL: query.feedURL)
                total = try order.total(db)
                items = try Self.listRows(
                    db, order, positions: offset..<offset + perPage, columns: Self.listColumns, join: Self.listJoin
                ).map { position, row in Self.storedItem(row, position: position + 1) }
            }
            let lastPull = try Double.fetchOne(
                db, sql: "SELECT max(last_pull_at) FROM feed \(query.feedURL == nil ? "" : "WHERE url = ?")",
                arguments: query.feedURL.map { [$0] } ?? [])
            return ListedPage(
                items: try Self.withEnclosures(db, items), total: total,
                lastPullAt: lastPull.map(Date.init(timeIntervalSince1970:)))
        }
    }

    /// Up to `limit` items of `query`'s list in its order from just after `key` (nil: from the
    /// top), or with `backwards` back from just before it (nil: from the end), nearest first, each
    /// with its `listKey` (and position 0: the caller counts). Keyset reads: each is a seek in the
    /// order's index and a walk of `limit` passing rows, however deep the key is, and rows that
    /// landed above the key since do not shift what follows it.
    public func rows(_ query: ListQuery, after key: ListKey?, backwards: Bool = false, limit: Int)
        async throws(StoreError) -> [StoredItem]
    {
        try await read { db in
            try Self.withEnclosures(db, try Self.keyedRows(db, query, after: key, backwards: backwards, limit: limit))
        }
    }

    /// How many of `query`'s items come before `key` in its order, counting no further than `cap`.
    public func count(_ query: ListQuery, before key: ListKey, cap: Int) async throws(StoreError) -> Int {
        try await read { db in
            let conditions = Self.conditions(query)
            var count = 0
            for part in Self.keyedParts(query, after: key, backwards: true) where count < cap {
                let filter = (conditions.items + [part.condition]).joined(separator: " AND ")
                count +=
                    try Int.fetchOne(
                        db.cachedStatement(sql: "SELECT count(*) FROM (SELECT 1 FROM item WHERE \(filter) LIMIT ?)"),
                        arguments: conditions.arguments + part.arguments + [cap - count]) ?? 0
            }
            return count
        }
    }

    /// How many items `query`'s list holds.
    public func total(_ query: ListQuery) async throws(StoreError) -> Int {
        try await read { db in
            query.isFiltered ? try Self.filteredTotal(db, query) : try ListOrder(feedURL: query.feedURL).total(db)
        }
    }

    /// The rows of `listRows`.
    static func keyedRows(_ db: Database, _ query: ListQuery, after key: ListKey?, backwards: Bool, limit: Int) throws
        -> [StoredItem]
    {
        let conditions = Self.conditions(query)
        var items: [StoredItem] = []
        for part in keyedParts(query, after: key, backwards: backwards) where items.count < limit {
            let filter = (conditions.items + [part.condition]).joined(separator: " AND ")
            let rows = try Row.fetchCursor(
                db.cachedStatement(
                    sql: """
                        SELECT \(listColumns), item.timeline, item.feed_id, item.band, item.seq FROM item \(listJoin)
                        WHERE \(filter) ORDER BY \(part.order) LIMIT ?
                        """),
                arguments: conditions.arguments + part.arguments + [limit - items.count])
            while let row = try rows.next() {
                var item = Self.storedItem(row, position: 0)
                item.listKey = ListKey(timeline: row["timeline"], place: ListPlace(row: row))
                items.append(item)
            }
        }
        return items
    }

    /// The statements a keyset read runs in turn: each a condition on the rows after `key` (with
    /// `backwards`, before it) and their order. The timeline's order is (timeline DESC, feed_id,
    /// band, seq): rows after a key are those of its time after its place, then those of earlier
    /// times, two seeks in `item_timeline` (a row value cannot mix DESC and ASC in one
    /// comparison). A feed's order is (band, seq), in its `(feed_id, band, seq)` index.
    static func keyedParts(_ query: ListQuery, after key: ListKey?, backwards: Bool) -> [(
        condition: String, arguments: StatementArguments, order: String
    )] {
        let direction = backwards ? " DESC" : ""
        let beyond = backwards ? "<" : ">"
        let place = "item.band\(direction), item.seq\(direction)"
        guard query.feedURL == nil else {
            guard let key else { return [("1", [], place)] }
            return [("(item.band, item.seq) \(beyond) (?, ?)", [key.place.band, key.place.seq], place)]
        }
        let feedAndPlace = "item.feed_id\(direction), " + place
        let timeline = "item.timeline" + (backwards ? "" : " DESC") + ", " + feedAndPlace
        guard let key else { return [("1", [], timeline)] }
        return [
            (
                "item.timeline = ? AND (item.feed_id, item.band, item.seq) \(beyond) (?, ?, ?)",
                [key.timeline, key.place.feedID, key.place.band, key.place.seq], feedAndPlace
            ),
            ("item.timeline \(backwards ? ">" : "<") ?", [key.timeline], timeline),
        ]
    }

    /// `items` with their enclosures: one statement for the page, on the table's key.
    static func withEnclosures(_ db: Database, _ items: [StoredItem]) throws -> [StoredItem] {
        guard !items.isEmpty else { return items }
        var found: [Int64: [FeedEnclosure]] = [:]
        let rows = try Row.fetchCursor(
            db.cachedStatement(
                sql: """
                    SELECT file.item_id, file.url, file.type, file.length, file.duration FROM json_each(?) AS wanted
                    CROSS JOIN item_enclosure AS file ON file.item_id = wanted.value ORDER BY file.item_id, file.position
                    """),
            arguments: ["[" + items.map { String($0.number) }.joined(separator: ",") + "]"])
        while let row = try rows.next() {
            found[row[0], default: []].append(
                FeedEnclosure(url: row[1], type: row[2], length: row[3], duration: row[4]))
        }
        guard !found.isEmpty else { return items }
        return items.map { item in
            var item = item
            item.enclosures = found[item.number] ?? []
            return item
        }
    }

    /// Remembers the page the reader was shown, in the list of one feed or of all feeds. The page
    /// already remembered last is not written again: paging back and forth over one page stays a
    /// read, with no WAL to start and sync, no checkpoint when the store closes.
    public func setReadingPosition(_ position: ReadingPosition) async throws(StoreError) {
        guard try await latestReadingPosition() != position else { return }
        try await write { db in try ReadingPositionRecord(position, at: clock.now()).upsert(db) }
    }

    /// The position `list` recorded most recently, in whichever list it was.
    public func latestReadingPosition() async throws(StoreError) -> ReadingPosition? {
        try await read { db in
            try ReadingPositionRecord.order(ReadingPositionRecord.Columns.updatedAt.desc).fetchOne(db)?.position
        }
    }
}
