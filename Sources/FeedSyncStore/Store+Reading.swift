internal import CFeedSyncSystem
import FeedSyncFeed
import FeedSyncMarkup
import FeedSyncModel
import Foundation
import GRDB
import Synchronization

// Reading: the feeds' counts, an item whole, marks, renaming, folders and removing.

extension Store {
    /// Every feed with its item and unread counts, in the order they were added. The counts come
    /// from `band_size` and the triggers' `read_count`: no feed's items are scanned.
    public func feedSummaries() async throws(StoreError) -> [FeedSummary] {
        try await read { db in
            let statement = try db.makeStatement(
                sql: """
                    SELECT \(FeedColumn.selection), read_count,
                        coalesce((SELECT sum(size) FROM band_size WHERE feed_id = feed.id), 0)
                    FROM feed ORDER BY id
                    """)
            let (readColumn, itemsColumn) = (CInt(FeedColumn.allCases.count), CInt(FeedColumn.allCases.count + 1))
            var summaries: [FeedSummary] = []
            summaries.reserveCapacity(try Int.fetchOne(db, sql: "SELECT count(*) FROM feed") ?? 0)
            let rows = try Row.fetchCursor(statement)
            while try rows.next() != nil {
                let count = statement.value(at: itemsColumn).integer(in: 0...Int(Int32.max)) ?? 0
                let read = statement.value(at: readColumn).integer(in: 0...Int(Int32.max)) ?? 0
                summaries.append(FeedSummary(feed: Feed(statement), items: count, unread: max(0, count - read)))
            }
            return summaries
        }
    }

    /// Gives the feed a title of the user's, or with nil gives it back its own.
    public func rename(feedID: Int64, title: String?) async throws(StoreError) {
        try await write { db in
            try db.execute(sql: "UPDATE feed SET custom_title = ? WHERE id = ?", arguments: [title, feedID])
        }
    }

    /// Files the feeds `feedIDs` in `folder` (a path, `Tech/Swift`), or in none; one transaction.
    public func setFolder(_ folder: String?, feedIDs: [Int64]) async throws(StoreError) {
        try await write { db in
            let update = try db.cachedStatement(sql: "UPDATE feed SET folder = ? WHERE id = ?")
            for id in feedIDs { try update.execute(arguments: [folder, id]) }
        }
    }

    /// Unsubscribes: the feed, its items, and the pictures no item uses any more go, in one
    /// transaction. Returns the files of the pictures that went, for the caller to delete.
    public func removeFeed(id: Int64) async throws(StoreError) -> [String] {
        try await write { db in
            // Items (and their band sizes) go with the feed: ON DELETE CASCADE.
            try db.execute(sql: "DELETE FROM feed WHERE id = ?", arguments: [id])
            return try Self.deleteUnusedPictures(db)
        }
    }

    /// What removing feed `id` would take: its items, and the cached pictures (with their bytes)
    /// no other feed's item shows.
    public func removal(feedID id: Int64) async throws(StoreError) -> (items: Int, pictures: Int, bytes: Int64) {
        try await read { db in
            let items = try Int.fetchOne(db, sql: "SELECT count(*) FROM item WHERE feed_id = ?", arguments: [id]) ?? 0
            let row = try Row.fetchOne(
                db,
                sql: """
                    WITH shown(picture_id) AS (
                        SELECT picture_id FROM item WHERE feed_id = ?1 AND picture_id IS NOT NULL
                        UNION SELECT shown.picture_id FROM item_content_picture AS shown
                            JOIN item ON item.id = shown.item_id WHERE item.feed_id = ?1)
                    SELECT count(*), coalesce(sum(picture.bytes), 0) FROM shown
                    JOIN picture ON picture.id = shown.picture_id AND picture.status = 'cached'
                    WHERE NOT EXISTS (SELECT 1 FROM item WHERE picture_id = shown.picture_id AND feed_id != ?1)
                        AND NOT EXISTS (
                            SELECT 1 FROM item_content_picture AS other JOIN item ON item.id = other.item_id
                            WHERE other.picture_id = shown.picture_id AND item.feed_id != ?1)
                    """, arguments: [id])
            return (items, row?[0] ?? 0, row?[1] ?? 0)
        }
    }

    /// Removes the items read (or hidden by a rule), not starred and older than `before` (their place in the timeline),
    /// but for an account's item with a mark still queued for its server, in one transaction:
    /// their keys stay (`item_gone`) so no pull stores them again, the lists close up around
    /// them (each band's seqs renumbered from 0, the band sizes and timeline runs of their feeds
    /// made again), and the pictures no item uses any more go. How many went, and the files of
    /// the pictures that went, for the caller to delete.
    public func removeItems(before: Date) async throws(StoreError) -> (items: Int, files: [String]) {
        try await write { db in
            try db.execute(
                sql: """
                    CREATE TEMP TABLE doomed AS SELECT id, feed_id, band, key FROM item
                    WHERE (read = 1 OR hidden = 1) AND starred = 0 AND timeline < ?
                        AND NOT EXISTS (SELECT 1 FROM sync_status WHERE item_id = item.id)
                    """, arguments: [before.timeIntervalSince1970])
            defer { try? db.execute(sql: "DROP TABLE IF EXISTS temp.doomed") }
            let count = try Int.fetchOne(db, sql: "SELECT count(*) FROM temp.doomed") ?? 0
            guard count > 0 else { return (0, []) }
            try db.execute(
                sql: """
                    INSERT OR IGNORE INTO item_gone (feed_id, key, band) SELECT feed_id, key, band FROM temp.doomed;
                    DELETE FROM item WHERE id IN (SELECT id FROM temp.doomed);
                    """)
            try Self.closeUp(db, "temp.doomed")
            return (count, try Self.deleteUnusedPictures(db))
        }
    }

    /// The item numbered `number`, whole, or nil when there is none.
    public func item(number: Int64) async throws(StoreError) -> ItemDetail? {
        try await read { db in
            try Row.fetchOne(
                db,
                sql: """
                    SELECT \(Self.listColumns), summary, content, article.status AS article_status,
                        article.html AS article_html, article.error AS article_error
                    FROM item \(Self.listJoin)
                    LEFT JOIN item_article AS article ON article.item_id = item.id AND article.link = item.link
                    WHERE item.id = ?
                    """,
                arguments: [number]
            ).map { row in
                let article = row.text("article_status") == "stored" ? row.text("article_html") : nil
                return ItemDetail(
                    item: try Self.withEnclosures(db, [Self.storedItem(row, position: 0)])[0],
                    summary: row.text("summary"), content: article ?? row.text("content"),
                    contentSource: article == nil ? "feed" : "page",
                    articleError: row.text("article_status") == "failed" ? row.text("article_error") : nil,
                    pictures: try Self.articlePictures(db, ofItem: number))
            }
        }
    }

    /// The file of item `number`'s own picture, or of the picture at `position` inside its
    /// article, when that picture is cached; nil otherwise. One row, not the whole item: the page
    /// asks for fifty pictures a screen.
    public func cachedPictureFile(ofItem number: Int64, inside position: Int? = nil) async throws(StoreError)
        -> CachedFile?
    {
        try await read { db in
            try Row.fetchOne(
                db,
                sql: position == nil
                    ? """
                    SELECT picture.id, picture.file, picture.bytes, picture.hash
                    FROM item JOIN picture ON picture.id = item.picture_id
                    WHERE item.id = ? AND picture.status = 'cached'
                    """
                    : """
                    SELECT picture.id, picture.file, picture.bytes, picture.hash
                    FROM item_content_picture AS shown JOIN picture ON picture.id = shown.picture_id
                    WHERE shown.item_id = ? AND shown.position = ? AND picture.status = 'cached'
                    """,
                arguments: position.map { [number, $0] } ?? [number]
            ).flatMap { CachedFile.from($0) }
        }
    }

    /// Marks the items numbered `numbers` read (or unread); returns the numbers that name no item.
    public func mark(_ numbers: [Int64], read: Bool) async throws(StoreError) -> [Int64] {
        try await set("read", read, of: numbers)
    }

    /// Stars the items numbered `numbers` (or takes their stars off); returns the numbers that name no item.
    public func star(_ numbers: [Int64], starred: Bool) async throws(StoreError) -> [Int64] {
        try await set("starred", starred, of: numbers)
    }

    /// Sets the flag `column` (read, starred) of the items numbered `numbers`, queuing the change
    /// for an account's items; the numbers that name no item.
    private func set(_ column: String, _ value: Bool, of numbers: [Int64]) async throws(StoreError) -> [Int64] {
        try await write { db in
            let update = try db.cachedStatement(sql: "UPDATE item SET \(column) = ? WHERE id = ?")
            var missing: [Int64] = []
            for number in numbers {
                try update.execute(arguments: [value, number])
                // An UPDATE counts every row its WHERE matched, changed or not.
                if db.changesCount == 0 { missing.append(number) }
            }
            try queueMarks(
                db, field: column, value: value, where: "item.id IN (SELECT value FROM json_each(?))",
                ["[" + numbers.map(String.init).joined(separator: ",") + "]"])
            return missing
        }
    }

    /// Marks every item read (or unread), or only `feedID`'s, or only those of the feeds in
    /// `folder` and the folders inside it, or only those published (or, with no date, placed in
    /// the timeline) before `before`; returns how many changed.
    public func markAll(read: Bool, feedID: Int64?, folder: String? = nil, before: Date?) async throws(StoreError)
        -> Int
    {
        try await write { db in
            var conditions = ["read != ?"]
            var values: [(any DatabaseValueConvertible)?] = [read]
            var stream = "'user/-/state/com.google/reading-list'"
            if let feedID {
                conditions.append("feed_id = ?")
                values.append(feedID)
                stream = "feed.remote_key"
            }
            if let folder {
                conditions.append(
                    "feed_id IN (SELECT id FROM feed WHERE folder = ? OR substr(folder, 1, length(?) + 1) = ? || '/')")
                values += [folder, folder, folder]
                stream = "'user/-/label/' || feed.folder"
            }
            if let before {
                conditions.append("timeline < ?")
                values.append(before.timeIntervalSince1970)
            }
            let filter = conditions.joined(separator: " AND ")
            // The account items' marks wait for their servers: queued before the update changes
            // what `read != ?` selects. A Google Reader server's take one catch-up a stream, up to
            // the newest item it gave (nothing that arrived after is marked); others' a mark an item.
            var own = filter
            if read, before == nil {
                own += " AND NOT " + (try queueCatchUps(db, stream: stream, where: filter, values))
            }
            try queueMarks(db, field: "read", value: read, where: own, values)
            try db.execute(
                sql: "UPDATE item SET read = ? WHERE \(filter)", arguments: StatementArguments([read] + values))
            return db.changesCount
        }
    }

}
