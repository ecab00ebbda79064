import FeedSyncFeed
import FeedSyncMarkup
import FeedSyncModel
import Foundation
import GRDB

// What `Store.commit` and `Store.recordPull` share: the feed's names and format, the picture rows, the timeline.

extension Store {
    /// Writes what a pull found of the feed: its names, and its format unless one was chosen.
    static func write(_ found: PageCommit.Found, feedID: Int64, _ db: Database) throws {
        try db.execute(
            sql: """
                UPDATE feed SET title = ?, site_url = ?,
                    format = CASE WHEN format_chosen THEN format ELSE coalesce(?, format) END
                WHERE id = ?
                """,
            arguments: [found.title, found.siteURL, found.format?.rawValue, feedID])
    }

    /// Links an item to the pictures its content shows, in order, each picture row shared.
    static func linkArticlePictures(_ db: Database, item id: Int64, _ pictures: [ContentPicture]) throws {
        guard !pictures.isEmpty else { return }
        let insert = try db.cachedStatement(
            sql: "INSERT INTO item_content_picture (item_id, position, picture_id, source) VALUES (?, ?, ?, ?)")
        for (position, picture) in pictures.prefix(ArticlePictures.perItem).enumerated() {
            try insert.execute(arguments: [id, position, try pictureID(db, url: picture.url), picture.source])
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
