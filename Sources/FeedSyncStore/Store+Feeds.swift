internal import CFeedSyncSystem
import FeedSyncFeed
import FeedSyncMarkup
import FeedSyncModel
import Foundation
import GRDB
import Synchronization

// The feeds: subscribing, how each pull ended, status.

extension Store {
    /// Remembers `url` as a subscribed feed, or returns it if it already is, with its format set
    /// as `format` says.
    public func subscribe(url: String, format: FormatSetting = .keep) async throws(StoreError) -> Feed {
        try await write { db in
            try db.execute(
                sql: "INSERT INTO feed (url, added_at, format) VALUES (?, ?, 'auto') ON CONFLICT(url) DO NOTHING",
                arguments: [url, clock.now().timeIntervalSince1970])
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
    public func subscribe(_ feeds: [OPML.Entry]) async throws(StoreError) -> [Bool] {
        try await write { db in
            let insert = try db.cachedStatement(
                sql: """
                    INSERT INTO feed (url, added_at, format, custom_title, folder, site_url)
                    VALUES (?, ?, 'auto', ?, ?, ?) ON CONFLICT (url) DO NOTHING
                    """)
            let now = clock.now().timeIntervalSince1970
            return try feeds.map { feed in
                try insert.execute(arguments: [feed.url, now, feed.title, feed.folder, feed.siteURL])
                return db.changesCount == 1
            }
        }
    }

    /// Every subscribed feed, in the order they were added.
    public func feeds() async throws(StoreError) -> [Feed] {
        try await read { db in try Feed.all(db) }
    }

    public func feed(url: String) async throws(StoreError) -> Feed? {
        try await read { db in try Feed.fetchOne(db, sql: "SELECT * FROM feed WHERE url = ?", arguments: [url]) }
    }

    /// Records how a pull of the feed ended and when it is due again. A permanent redirect seen
    /// by the pull before this one too moves the feed to its target (unless another feed is
    /// there); returns the URL the feed moved to, if it did.
    @discardableResult
    public func recordPull(feedID: Int64, _ pull: PullRecord) async throws(StoreError) -> String? {
        try await write { db in
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
            if let history = pull.history {
                try db.execute(
                    sql: "UPDATE feed SET history_stop = ?, history_retry_at = ? WHERE id = ?",
                    arguments: [history.stop, history.retryAt?.timeIntervalSince1970, feedID])
            }
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

    /// Per feed: items stored, pictures by status, and everything the feed row says.
    public func status() async throws(StoreError) -> [FeedStatus] {
        try await read { db in
            let feeds = try Feed.all(db)
            return try feeds.map { feed in
                var pictures: [PictureStatus: (count: Int, bytes: Int64)] = [:]
                // Distinct pictures, however many items share one: the rows' own and those inside
                // their articles, the same pictures a pull counts as it downloads them.
                for row in try Row.fetchAll(
                    db,
                    sql: """
                        SELECT status, count(*) AS n, coalesce(sum(bytes), 0) AS bytes FROM picture
                        WHERE id IN (
                            SELECT picture_id FROM item WHERE feed_id = ?1
                            UNION SELECT c.picture_id FROM item_content_picture c JOIN item i ON i.id = c.item_id
                            WHERE i.feed_id = ?1)
                        GROUP BY status
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
