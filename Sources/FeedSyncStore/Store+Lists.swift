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
