internal import CFeedSyncSystem
import FeedSyncFeed
import FeedSyncMarkup
import FeedSyncModel
import Foundation
import GRDB
import Synchronization

// What a pull stores: a page's items and the cursor after them, in one transaction.

extension Store {
    /// For those of `keys` already stored in the feed, the band each one sits in.
    public func bands(feedID: Int64, keys: [String]) async throws(StoreError) -> [String: Int] {
        guard !keys.isEmpty else { return [:] }
        return try await read { db in
            // One statement a page: json_each walks the keys in order and each probes the
            // (feed_id, key) index; an `IN (…)` list would sort the keys into a temporary table first.
            var found: [String: Int] = [:]
            // An item removed for its age (`item_gone`) is known where it was: the paging treats it
            // as stored, and `writeItems` does not store it again.
            let rows = try Row.fetchCursor(
                db.cachedStatement(
                    sql: """
                        SELECT item.key, item.band FROM json_each(?1) AS wanted
                        CROSS JOIN item ON item.feed_id = ?2 AND item.key = wanted.value
                        UNION ALL
                        SELECT gone.key, gone.band FROM json_each(?1) AS wanted
                        CROSS JOIN item_gone AS gone ON gone.feed_id = ?2 AND gone.key = wanted.value
                        """),
                arguments: [jsonArray(keys), feedID])
            while let row = try rows.next() { found[row[0]] = row[1] as Int }
            return found
        }
    }

    /// The highest band in use (the lowest number), or `nil` when the feed has no items.
    public func topBand(feedID: Int64) async throws(StoreError) -> Int? {
        try await read { db in
            try Int.fetchOne(db, sql: "SELECT min(band) FROM item WHERE feed_id = ?", arguments: [feedID])
        }
    }

    /// Writes items to `band` of the feed: those not stored before appended in order, those stored
    /// before refreshed in place (a `commit`'s, or an account page's, in its transaction). Returns
    /// how many were new.
    @discardableResult
    func writeItems(_ db: Database, feedID: Int64, band: Int, new: [FeedItem], updated: [FeedItem]) throws
        -> Int
    {
        let now = clock.now().timeIntervalSince1970
        var seq =
            try Int.fetchOne(
                db.cachedStatement(sql: "SELECT max(seq) FROM item WHERE feed_id = ? AND band = ? AND seq >= 0"),
                arguments: [feedID, band]) ?? -1
        // New and known items are written alike: an insert that finds the key already stored
        // refreshes the content in place instead, so a known key keeps its place (band, seq).
        // seq counts only rows really inserted, keeping each band's seq 0, 1, 2 ... without
        // holes, and band_size in step (list relies on both). Items sharing a picture URL share
        // its row.
        let insert = try db.cachedStatement(
            sql: """
                INSERT INTO item (feed_id, key, band, seq, title, link, pic_url, picture_id, published, summary,
                                  content, stored_at, timeline, author, categories, hidden_by, hidden, read, starred)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (feed_id, key) DO NOTHING
                """)
        let refresh = try db.cachedStatement(
            sql: """
                UPDATE item SET title = ?, link = ?, published = ?, summary = ?, content = ?, pic_url = ?,
                    picture_id = ?, author = ?, categories = ?
                WHERE feed_id = ? AND key = ? RETURNING id
                """)
        let byline = try db.cachedStatement(
            sql: "INSERT INTO item_byline (rowid, author, categories) VALUES (?, ?, ?)")
        // A rule hides an item before it takes a place (its seq is -id), marks it before it is
        // stored; a view that keeps its items takes it in.
        let rules = try ArrivalRules(db, feedID: feedID, now: Int64(now))
        let hide = try db.cachedStatement(sql: "UPDATE item SET seq = -id WHERE id = ?")
        let inView = try db.cachedStatement(sql: "INSERT OR IGNORE INTO view_item (view_id, item_id) VALUES (?, ?)")
        let index = try db.cachedStatement(sql: "INSERT INTO item_search (rowid, title, body) VALUES (?, ?, ?)")
        let dropEnclosures = try db.cachedStatement(sql: "DELETE FROM item_enclosure WHERE item_id = ?")
        let addEnclosure = try db.cachedStatement(
            sql: "INSERT INTO item_enclosure (item_id, position, url, type, length, duration) VALUES (?, ?, ?, ?, ?, ?)"
        )
        func enclose(_ id: Int64, _ item: FeedItem) throws {
            for (position, file) in item.enclosures.enumerated() {
                try addEnclosure.execute(arguments: [id, position, file.url, file.type, file.length, file.duration])
            }
        }
        var timeline = try Timeline(db, feedID: feedID, band: band, above: seq)
        var inserted = 0
        var placed = 0
        var searched: [(id: Int64, item: FeedItem)] = []
        // An item stored under the key an earlier rule gave it moves to its key (no
        // duplicate; its place, read state and number kept).
        let rekey = try db.cachedStatement(sql: "UPDATE OR IGNORE item SET key = ? WHERE feed_id = ? AND key = ?")
        for item in updated {
            if let former = item.formerKey { try rekey.execute(arguments: [item.key, feedID, former]) }
        }
        let gone = try db.cachedStatement(sql: "SELECT 1 FROM item_gone WHERE feed_id = ? AND key = ?")
        for (index, item) in [new, updated].joined().enumerated() {
            // A known key may be one removed for its age: it stays removed.
            if index >= new.count, try Bool.fetchOne(gone, arguments: [feedID, item.key]) == true { continue }
            let pictureID = try item.pictureURL.map { url in try Self.pictureID(db, url: url) }
            let time = timeline.time(published: item.publishedSeconds, now: Int64(now))
            let (actions, hiddenBy, views) =
                rules.isEmpty ? ([], nil, []) : rules.apply(to: item, time: time, rules: index < new.count)
            let hidden = hiddenBy != nil
            let categories = item.categories.isEmpty ? nil : item.categories.joined(separator: "\n")
            // The one statement stepped through SQLite's C API (Store+SQLite.swift explains why).
            try insert.run(db) { values in
                values.add(feedID)
                values.add(item.key)
                values.add(band)
                // A hidden item's seq until it is -id: below any other's, as -id is.
                values.add(hidden ? Int64.min + Int64(index) : Int64(seq + 1))
                values.add(item.title)
                values.add(item.link)
                values.add(item.pictureURL)
                values.add(pictureID)
                values.add(item.published)
                values.add(item.summary)
                values.add(item.content)
                values.add(now)
                values.add(time)
                values.add(item.author)
                values.add(categories)
                values.add(hiddenBy)
                values.add(hidden ? 1 : 0)
                values.add(actions.contains(.read) ? 1 : 0)
                values.add(actions.contains(.star) ? 1 : 0)
            }
            if db.changesCount == 1 {
                inserted += 1
                let id = db.lastInsertedRowID
                if hidden {
                    try hide.execute(arguments: [id])
                } else {
                    seq += 1
                    placed += 1
                    timeline.append(time, seq: seq)
                }
                // An account's server hears of a rule's marks as of a reader's.
                for (action, field) in [(RuleAction.read, "read"), (.star, "starred")]
                where rules.isAccount && actions.contains(action) {
                    try queueMarks(db, field: field, value: true, where: "item.id = ?", [id])
                }
                if item.author != nil || categories != nil {
                    try byline.execute(arguments: [id, item.author, categories])
                }
                for view in views { try inView.execute(arguments: [view, id]) }
                searched.append((id, item))
                try Self.linkArticlePictures(db, item: id, item.contentPictures ?? [])
                try enclose(id, item)
            } else {
                // A changed text re-indexes itself (Migrations/0009's trigger).
                refresh.setUncheckedArguments([
                    item.title, item.link, item.published, item.summary, item.content, item.pictureURL, pictureID,
                    item.author, categories, feedID,
                    item.key,
                ])
                guard let id = try Int64.fetchOne(refresh) else { continue }
                // Its words may have changed: its kept views are found again.
                if !rules.isEmpty {
                    try db.cachedStatement(sql: "DELETE FROM view_item WHERE item_id = ?").execute(arguments: [id])
                    for view in views { try inView.execute(arguments: [view, id]) }
                }
                try db.cachedStatement(sql: "DELETE FROM item_content_picture WHERE item_id = ?").execute(
                    arguments: [id])
                try Self.linkArticlePictures(db, item: id, item.contentPictures ?? [])
                try dropEnclosures.execute(arguments: [id])
                try enclose(id, item)
            }
        }
        // The search index is written after the items, not between them: FTS5 rows inserted
        // between other statements cost four times as much (BENCHMARKS.md, P6).
        for (id, item) in searched {
            // The index keeps no copy of the text: a row leaves it only given the same text,
            // made again from the item's columns (search_body), so the parser's must be that.
            assert(
                item.searchBody == nil
                    || item.searchBody == SearchText.body(content: item.content, summary: item.summary))
            try index.run(db) { values in
                values.add(id)
                values.add(SearchText.title(item.title))
                values.add(item.searchBody ?? SearchText.body(content: item.content, summary: item.summary))
            }
        }
        try timeline.write(db)
        // GRDB's observers did not see the inserts stepped above: tell them.
        try db.notifyChanges(in: Table("item"))
        // A band whose new items were all hidden has its row too (of 0): the band is in use, and
        // an account's next walk opens a band above it.
        if inserted > 0 {
            try db.cachedStatement(
                sql: """
                    INSERT INTO band_size (feed_id, band, size) VALUES (?, ?, ?)
                    ON CONFLICT (feed_id, band) DO UPDATE SET size = size + excluded.size
                    """
            ).execute(arguments: [feedID, band, placed])
        }
        return inserted
    }

    /// Writes a page's items and the cursor that follows them in one transaction: a process killed
    /// at any instant leaves either both or neither.
    public func commit(_ page: PageCommit) async throws(StoreError) {
        try await write { db in
            try writeItems(
                db, feedID: page.feedID, band: page.band, new: page.newItems, updated: page.updatedItems)
            let items = page.newItems + page.updatedItems
            if items.count >= 3 {
                // A podcast's episodes are the sound or video they carry, not summaries of a page.
                let short = items.filter { item in
                    !item.enclosures.contains(where: \.isSoundOrVideo)
                        && (item.content ?? item.summary ?? "").utf8.count < 600
                        && (item.link?.hasPrefix("http://") == true || item.link?.hasPrefix("https://") == true)
                }
                try db.cachedStatement(sql: "UPDATE feed SET summary_only = ? WHERE id = ?").execute(
                    arguments: [10 * short.count >= 8 * items.count, page.feedID])
            }
            let cursor = page.cursor
            try db.cachedStatement(
                sql: """
                    UPDATE feed SET etag = ?, last_modified = ?, body_hash = ?, remote_total = ?, per_page = ?,
                        backfill_page = ?, backfill_url = ?, backfill_total = ?, backfill_done = ?, backfill_note = ?,
                        gap_band = ?, gap_page = ?, gap_total = ?, gap_url = ?
                    WHERE id = ?
                    """
            ).execute(arguments: [
                cursor.etag, cursor.lastModified, cursor.bodyHash, cursor.remoteTotal, cursor.perPage,
                cursor.backfillPage, cursor.backfillURL, cursor.backfillTotal, cursor.backfillDone, cursor.backfillNote,
                cursor.gap?.band, cursor.gap?.page, cursor.gap?.total, cursor.gap?.url, page.feedID,
            ])
            if let found = page.found { try Self.write(found, feedID: page.feedID, db) }
        }
    }
}
