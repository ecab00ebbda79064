import FeedSyncFeed
import Foundation
import GRDB

/// How a feed's format is known.
public enum FormatSetting: Sendable, Equatable {
    /// As before (found in its documents, unless one was chosen).
    case keep
    /// Found in its documents again, forgetting a chosen one.
    case found
    /// This one, whatever the documents say.
    case chosen(FeedFormat)
}

extension Store {
    /// Remembers `url` as a subscribed feed, or returns it if it already is, with its format set
    /// as `format` says.
    public func subscribe(url: String, format: FormatSetting = .keep) throws(StoreError) -> Feed {
        try write { db in
            try db.execute(
                sql: "INSERT INTO feed (url, added_at, format) VALUES (?, ?, 'auto') ON CONFLICT(url) DO NOTHING",
                arguments: [url, Date().timeIntervalSince1970])
            switch format {
            case .keep: break
            case .found: try db.execute(sql: "UPDATE feed SET format_chosen = 0 WHERE url = ?", arguments: [url])
            case .chosen(let format):
                try db.execute(
                    sql: "UPDATE feed SET format = ?, format_chosen = 1 WHERE url = ?",
                    arguments: [format.rawValue, url])
            }
            return try Feed.fetchOne(db, sql: "SELECT * FROM feed WHERE url = ?", arguments: [url])!
        }
    }

    /// Subscribes to those of `feeds` (an OPML file's) not subscribed yet (URLs compared as given),
    /// each with its title, site and folder, in one transaction; returns which were added.
    public func subscribe(_ feeds: [OPML.Entry]) throws(StoreError) -> [Bool] {
        try write { db in
            let insert = try db.cachedStatement(
                sql: """
                    INSERT INTO feed (url, added_at, format, custom_title, folder, site_url)
                    VALUES (?, ?, 'auto', ?, ?, ?) ON CONFLICT (url) DO NOTHING
                    """)
            let now = Date().timeIntervalSince1970
            return try feeds.map { feed in
                try insert.execute(arguments: [feed.url, now, feed.title, feed.folder, feed.siteURL])
                return db.changesCount == 1
            }
        }
    }

    /// Every subscribed feed, in the order they were added.
    public func feeds() throws(StoreError) -> [Feed] {
        try read { db in try Feed.fetchAll(db, sql: "SELECT * FROM feed ORDER BY id") }
    }

    public func feed(url: String) throws(StoreError) -> Feed? {
        try read { db in try Feed.fetchOne(db, sql: "SELECT * FROM feed WHERE url = ?", arguments: [url]) }
    }

    /// Records how a pull of the feed ended and when it is due again. A permanent redirect seen
    /// by the pull before this one too moves the feed to its target (unless another feed is
    /// there); returns the URL the feed moved to, if it did.
    @discardableResult
    public func recordPull(feedID: Int64, _ pull: PullRecord) throws(StoreError) -> String? {
        try write { db in
            try db.execute(
                sql: """
                    UPDATE feed SET last_pull_at = ?, last_outcome = ?, last_error = ?, next_retry_at = ?, malformed = ?,
                        due_at = ?, due_reason = ?, failures = ?, unanswered = ?, gone_at = coalesce(gone_at, ?)
                    WHERE id = ?
                    """,
                arguments: [
                    pull.at.timeIntervalSince1970, pull.outcome.rawValue, pull.error,
                    pull.retryAfter?.timeIntervalSince1970, pull.malformed,
                    pull.due?.timeIntervalSince1970, pull.dueReason, pull.failures, pull.unanswered,
                    pull.gone ? pull.at.timeIntervalSince1970 : nil, feedID,
                ])
            if let validators = pull.validators {
                try db.execute(
                    sql: "UPDATE feed SET etag = ?, last_modified = ? WHERE id = ?",
                    arguments: [validators.etag, validators.lastModified, feedID])
            }
            if let found = pull.found { try Self.write(found, feedID: feedID, db) }
            if let schedule = pull.schedule {
                try db.execute(
                    sql: "UPDATE feed SET ttl = ?, update_interval = ?, skip_hours = ?, skip_days = ? WHERE id = ?",
                    arguments: [
                        schedule.ttlMinutes, schedule.updateSeconds, schedule.skipHours, schedule.skipDays, feedID,
                    ])
            }
            guard pull.askedFeedURL else { return nil }
            let (url, seenBefore) =
                try Row.fetchOne(
                    db, sql: "SELECT url, redirect_url FROM feed WHERE id = ?", arguments: [feedID]
                ).map { ($0.text("url") ?? "", $0.text("redirect_url")) } ?? ("", nil)
            guard let target = pull.redirect, target == seenBefore,
                try Bool.fetchOne(db, sql: "SELECT 1 FROM feed WHERE url = ?", arguments: [target]) == nil
            else {
                try db.execute(
                    sql: "UPDATE feed SET redirect_url = ? WHERE id = ?", arguments: [pull.redirect, feedID])
                return nil
            }
            try db.execute(
                sql: "UPDATE feed SET url = ?, moved_from = ?, moved_at = ?, redirect_url = NULL WHERE id = ?",
                arguments: [target, url, pull.at.timeIntervalSince1970, feedID])
            // The reading position of the feed's own list is kept by its URL.
            try db.execute(
                sql: "UPDATE OR IGNORE reading_position SET scope = ? WHERE scope = ?", arguments: [target, url])
            return target
        }
    }

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

    /// Per feed: items stored, pictures by status, and everything the feed row says.
    public func status() throws(StoreError) -> [FeedStatus] {
        try read { db in
            let feeds = try Feed.fetchAll(db, sql: "SELECT * FROM feed ORDER BY id")
            return try feeds.map { feed in
                var pictures: [PictureStatus: (count: Int, bytes: Int64)] = [:]
                // Distinct pictures, however many items share one.
                for row in try Row.fetchAll(
                    db,
                    sql: """
                        SELECT status, count(*) AS n, coalesce(sum(bytes), 0) AS bytes FROM picture
                        WHERE id IN (SELECT picture_id FROM item WHERE feed_id = ?) GROUP BY status
                        """,
                    arguments: [feed.id])
                {
                    guard let status = row.text("status").flatMap(PictureStatus.init(rawValue:)) else { continue }
                    pictures[status] = (row.integer("n") ?? 0, Int64(row.integer("bytes") ?? 0))
                }
                pictures[.none] = (
                    try Int.fetchOne(
                        db, sql: "SELECT count(*) FROM item WHERE feed_id = ? AND picture_id IS NULL",
                        arguments: [feed.id]) ?? 0, 0
                )
                let count =
                    try Int.fetchOne(db, sql: "SELECT count(*) FROM item WHERE feed_id = ?", arguments: [feed.id]) ?? 0
                return FeedStatus(feed: feed, itemCount: count, pictures: pictures)
            }
        }
    }
}

extension Feed: FetchableRecord {
    public init(row: Row) {
        // Read leniently, and the numbers the paging arithmetic uses within FeedCursor's ranges: a
        // value out of range is unknown, as if the server had not said it.
        id = row["id"]
        url = row.text("url") ?? ""
        let gapBand = row.integer("gap_band", in: FeedCursor.bands)
        let gapPage = row.integer("gap_page", in: FeedCursor.pages)
        // "auto" (or a name this version does not know): found from the next document.
        format = row.text("format").flatMap(FeedFormat.init(rawValue:))
        formatChosen = row.integer("format_chosen") == 1
        cursor = FeedCursor(
            etag: row.text("etag"), lastModified: row.text("last_modified"), bodyHash: row.text("body_hash"),
            remoteTotal: row.integer("remote_total", in: FeedCursor.totals),
            perPage: row.integer("per_page", in: FeedCursor.perPages),
            backfillPage: row.integer("backfill_page", in: FeedCursor.pages), backfillURL: row.text("backfill_url"),
            backfillTotal: row.integer("backfill_total", in: FeedCursor.totals),
            backfillDone: row.integer("backfill_done") == 1, backfillNote: row.text("backfill_note"),
            gap: gapBand.flatMap { band in
                gapPage.map {
                    FeedCursor.Walk(
                        band: band, page: $0, total: row.integer("gap_total", in: FeedCursor.totals),
                        url: row.text("gap_url"))
                }
            })
        lastPullAt = row.real("last_pull_at").map(Date.init(timeIntervalSince1970:))
        lastOutcome = row.text("last_outcome").flatMap(PullOutcome.init(rawValue:))
        lastError = row.text("last_error")
        malformed = row.text("malformed")
        nextRetryAt = row.real("next_retry_at").map(Date.init(timeIntervalSince1970:))
        dueAt = row.real("due_at").map(Date.init(timeIntervalSince1970:))
        dueReason = row.text("due_reason")
        failures = row.integer("failures", in: 0...1_000_000) ?? 0
        unanswered = row.integer("unanswered", in: 0...1_000_000) ?? 0
        schedule = FeedSchedule(
            ttlMinutes: row.integer("ttl", in: 0...525_600),
            updateSeconds: row.integer("update_interval", in: 1...Int(Int32.max)),
            skipHours: row.integer("skip_hours", in: 0...0xFF_FFFF) ?? 0,
            skipDays: row.integer("skip_days", in: 0...0x7F) ?? 0)
        redirectURL = row.text("redirect_url")
        movedFrom = row.text("moved_from")
        movedAt = row.real("moved_at").map(Date.init(timeIntervalSince1970:))
        goneAt = row.real("gone_at").map(Date.init(timeIntervalSince1970:))
        title = row.text("title")
        siteURL = row.text("site_url")
        customTitle = row.text("custom_title")
        folder = row.text("folder")
    }
}
