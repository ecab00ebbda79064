import FeedSyncFeed
import Foundation
import GRDB

extension Store {
    /// For those of `keys` already stored in the feed, the band each one sits in.
    public func bands(feedID: Int64, keys: [String]) throws(StoreError) -> [String: Int] {
        guard !keys.isEmpty else { return [:] }
        return try read { db in
            // One statement a page: json_each walks the keys in order and each probes the
            // (feed_id, key) index; an `IN (…)` list would sort the keys into a temporary table first.
            var found: [String: Int] = [:]
            let rows = try Row.fetchCursor(
                db.cachedStatement(
                    sql: """
                        SELECT item.key, item.band FROM json_each(?) AS wanted
                        CROSS JOIN item ON item.feed_id = ? AND item.key = wanted.value
                        """),
                arguments: [String(decoding: try JSONEncoder().encode(keys), as: UTF8.self), feedID])
            while let row = try rows.next() { found[row[0]] = row[1] as Int }
            return found
        }
    }

    /// The highest band in use (the lowest number), or `nil` when the feed has no items.
    public func topBand(feedID: Int64) throws(StoreError) -> Int? {
        try read { db in try Int.fetchOne(db, sql: "SELECT min(band) FROM item WHERE feed_id = ?", arguments: [feedID])
        }
    }

    /// Writes a page's items and the cursor that follows them in one transaction: a process killed
    /// at any instant leaves either both or neither.
    public func commit(_ page: PageCommit) throws(StoreError) {
        try write { db in
            let now = Date().timeIntervalSince1970
            var seq =
                try Int.fetchOne(
                    db.cachedStatement(sql: "SELECT max(seq) FROM item WHERE feed_id = ? AND band = ?"),
                    arguments: [page.feedID, page.band]) ?? -1
            // New and known items are written alike: an insert that finds the key already stored
            // refreshes the content in place instead, so a known key keeps its place (band, seq).
            // seq counts only rows really inserted, keeping each band's seq 0, 1, 2 ... without
            // holes, and band_size in step (list relies on both). Items sharing a picture URL share
            // its row.
            let insert = try db.cachedStatement(
                sql: """
                    INSERT INTO item (feed_id, key, band, seq, title, link, pic_url, picture_id, published, summary,
                                      content, stored_at, timeline)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT (feed_id, key) DO NOTHING
                    """)
            let refresh = try db.cachedStatement(
                sql: """
                    UPDATE item SET title = ?, link = ?, published = ?, summary = ?, content = ?, pic_url = ?,
                        picture_id = ?
                    WHERE feed_id = ? AND key = ? RETURNING id
                    """)
            let index = try db.cachedStatement(
                sql: "INSERT OR REPLACE INTO item_search (rowid, title, body) VALUES (?, ?, ?)")
            var timeline = try Timeline(db, feedID: page.feedID, band: page.band, above: seq)
            var inserted = 0
            var searched: [(id: Int64, item: FeedItem)] = []
            for item in [page.newItems, page.updatedItems].joined() {
                let pictureID = try item.pictureURL.map { url in try Self.pictureID(db, url: url) }
                let time = timeline.time(published: item.publishedSeconds, now: Int64(now))
                // The one statement stepped through SQLite's C API (Store+SQLite.swift explains why).
                try insert.run(db) { values in
                    values.add(page.feedID)
                    values.add(item.key)
                    values.add(page.band)
                    values.add(seq + 1)
                    values.add(item.title)
                    values.add(item.link)
                    values.add(item.pictureURL)
                    values.add(pictureID)
                    values.add(item.published)
                    values.add(item.summary)
                    values.add(item.content)
                    values.add(now)
                    values.add(time)
                }
                let id: Int64
                if db.changesCount == 1 {
                    seq += 1
                    inserted += 1
                    timeline.append(time, seq: seq)
                    id = db.lastInsertedRowID
                } else {
                    refresh.setUncheckedArguments([
                        item.title, item.link, item.published, item.summary, item.content, item.pictureURL, pictureID,
                        page.feedID, item.key,
                    ])
                    guard let refreshed = try Int64.fetchOne(refresh) else { continue }
                    id = refreshed
                }
                searched.append((id, item))
            }
            // The search index is written after the items, not between them: FTS5 rows inserted
            // between other statements cost four times as much (BENCHMARKS.md, P6).
            for (id, item) in searched {
                try index.run(db) { values in
                    values.add(id)
                    values.add(SearchText.title(item.title))
                    values.add(SearchText.body(content: item.content, summary: item.summary))
                }
            }
            try timeline.write(db)
            // GRDB's observers did not see the inserts stepped above: tell them.
            try db.notifyChanges(in: Table("item"))
            if inserted > 0 {
                try db.cachedStatement(
                    sql: """
                        INSERT INTO band_size (feed_id, band, size) VALUES (?, ?, ?)
                        ON CONFLICT (feed_id, band) DO UPDATE SET size = size + excluded.size
                        """
                ).execute(arguments: [page.feedID, page.band, inserted])
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

    /// The picture row for `url`, created pending if new.
    static func pictureID(_ db: Database, url: String) throws -> Int64 {
        let select = try db.cachedStatement(sql: "SELECT id FROM picture WHERE url = ?")
        select.setUncheckedArguments([url])
        if let id = try Int64.fetchOne(select) { return id }
        let insert = try db.cachedStatement(sql: "INSERT INTO picture (url) VALUES (?)")
        insert.setUncheckedArguments([url])
        try insert.execute()
        return db.lastInsertedRowID
    }
}

/// The timeline times of a page's new items, and the runs they make (Migrations/0006_timeline.sql).
struct Timeline {
    let feedID: Int64
    let band: Int
    /// The time of the item above the next one stored: the band's last item, then each new one.
    var above: Int64?
    /// The run the band's last item ends, as it was before this page: a new item of its time grows it.
    var lastRun: (time: Int64, firstSeq: Int, size: Int)?
    /// Runs of this page's new items, in order; the first may be the growth of `lastRun`.
    var runs: [(time: Int64, firstSeq: Int, size: Int)] = []

    init(_ db: Database, feedID: Int64, band: Int, above seq: Int) throws {
        self.feedID = feedID
        self.band = band
        guard seq >= 0, let run = try Store.run(db, holding: ListPlace(feedID: feedID, band: band, seq: seq))
        else { return }
        above = run.time
        lastRun = run
    }

    /// The time of a new item: its published time, never later than `now`; undated, the time of
    /// the item above it in its feed, else `now`.
    func time(published: Int64?, now: Int64) -> Int64 {
        published.map { min($0, now) } ?? above ?? now
    }

    mutating func append(_ time: Int64, seq: Int) {
        above = time
        if let last = runs.last, last.time == time, last.firstSeq + last.size == seq {
            runs[runs.count - 1].size += 1
        } else if runs.isEmpty, let lastRun, lastRun.time == time, lastRun.firstSeq + lastRun.size == seq {
            runs.append((time, lastRun.firstSeq, lastRun.size + 1))
        } else {
            runs.append((time, seq, 1))
        }
    }

    /// Writes the runs: one statement per run, which for a page of one time (or of undated items) is one.
    func write(_ db: Database) throws {
        let upsert = try db.cachedStatement(
            sql: """
                INSERT INTO timeline_run (timeline, feed_id, band, first_seq, size) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT DO UPDATE SET size = excluded.size
                """)
        for run in runs {
            try upsert.execute(arguments: [run.time, feedID, band, run.firstSeq, run.size])
        }
    }
}
