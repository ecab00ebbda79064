import FeedSyncFeed
import FeedSyncMarkup
import FeedSyncModel
import Foundation
import GRDB

extension Store {
    /// Turns fetching each item's page on or off for a feed.
    public func setFullText(feedID: Int64, _ on: Bool) async throws(StoreError) {
        try await write { db in
            try db.execute(sql: "UPDATE feed SET full_text = ? WHERE id = ?", arguments: [on, feedID])
        }
    }

    /// The feeds whose items' pages are fetched.
    public func fullTextFeeds() async throws(StoreError) -> Set<Int64> {
        try await read { db in Set(try Int64.fetchAll(db, sql: "SELECT id FROM feed WHERE full_text = 1")) }
    }

    static let articleDue = """
        feed.full_text = 1 AND item.hidden = 0 AND (item.link LIKE 'http://%' OR item.link LIKE 'https://%')
        AND NOT EXISTS (
            SELECT 1 FROM item_article AS a WHERE a.item_id = item.id AND a.link = item.link
                AND (a.status = 'stored' OR a.next_attempt_at > ?))
        """

    /// Items of full-text feeds whose article is due: none stored for their link, and no failure
    /// still waiting. `first` (the reader's window) first, then the newest; at most `limit`.
    public func dueArticles(first: [Int64] = [], limit: Int) async throws(StoreError)
        -> [ArticleJob]
    {
        let now = clock.now()
        return try await read { db in
            func jobs(_ rows: [Row]) -> [ArticleJob] {
                rows.map { row in
                    ArticleJob(itemID: row["id"], link: row.text("link") ?? "", attempts: row.integer("attempts") ?? 0)
                }
            }
            let select = """
                SELECT item.id, item.link,
                    coalesce((SELECT attempts FROM item_article WHERE item_id = item.id AND link = item.link), 0)
                        AS attempts
                FROM item JOIN feed ON feed.id = item.feed_id WHERE \(Self.articleDue)
                """
            var found: [ArticleJob] = []
            if !first.isEmpty {
                let listed = first.prefix(500).map(String.init).joined(separator: ",")
                let window = jobs(
                    try Row.fetchAll(
                        db, sql: select + " AND item.id IN (\(listed))", arguments: [now.timeIntervalSince1970]))
                let order = Dictionary(first.enumerated().map { ($1, $0) }) { a, _ in a }
                found = window.sorted { (order[$0.itemID] ?? 0) < (order[$1.itemID] ?? 0) }
            }
            let rest = try Row.fetchAll(
                db, sql: select + " ORDER BY item.timeline DESC, item.feed_id, item.band, item.seq LIMIT ?",
                arguments: [now.timeIntervalSince1970, limit + found.count])
            let taken = Set(found.map(\.itemID))
            found += jobs(rest).filter { !taken.contains($0.itemID) }
            return Array(found.prefix(limit))
        }
    }

    /// Keeps what items' pages gave, in one transaction: each item's article (made from its page
    /// at `link`) with its pictures in place of those of the feed's text, or why there is none.
    public func keepArticles(_ outcomes: [ArticleOutcome]) async throws(StoreError) {
        let now = clock.now()
        try await write { db in
            // Prepared once a pull, not three times an article: the triggers on item_article are
            // compiled into each statement, so preparing one costs more than running it.
            let delete = try db.cachedStatement(sql: "DELETE FROM item_article WHERE item_id = ?")
            let unlink = try db.cachedStatement(sql: "DELETE FROM item_content_picture WHERE item_id = ?")
            for outcome in outcomes {
                try delete.execute(arguments: [outcome.itemID])
                switch outcome.result {
                case .stored(let html, let title, let byline, let pictures):
                    try db.cachedStatement(
                        sql: """
                            INSERT INTO item_article (item_id, link, status, html, title, byline, fetched_at)
                            VALUES (?, ?, 'stored', ?, ?, ?, ?)
                            """
                    ).execute(arguments: [outcome.itemID, outcome.link, html, title, byline, now.timeIntervalSince1970])
                    try unlink.execute(arguments: [outcome.itemID])
                    try Self.linkArticlePictures(db, item: outcome.itemID, pictures)
                case .failed(let error, let attempts, let retryAt):
                    try db.cachedStatement(
                        sql: """
                            INSERT INTO item_article (item_id, link, status, error, attempts, next_attempt_at, fetched_at)
                            VALUES (?, ?, 'failed', ?, ?, ?, ?)
                            """
                    ).execute(arguments: [
                        outcome.itemID, outcome.link, String(error.prefix(500)), attempts,
                        (retryAt ?? .distantFuture).timeIntervalSince1970, now.timeIntervalSince1970,
                    ])
                }
            }
            // The search rows after every other statement: FTS5 writes its pending terms out at
            // each statement with a trigger (a statement journal), so written between them each
            // article was an index segment of its own (Migrations/0016).
            let index = try db.cachedStatement(
                sql: "INSERT INTO article_search (rowid, body) VALUES (?, search_body(?, NULL))")
            for outcome in outcomes {
                if case .stored(let html, _, _, _) = outcome.result {
                    try index.execute(arguments: [outcome.itemID, html])
                }
            }
        }
    }

    /// The feeds (not full-text, not an account's) whose items are summaries only: of the last
    /// page stored (three items at least), eight items in ten have a text of a few lines at most
    /// and a web link (`feed.summary_only`, set by `commit`).
    public func summaryOnlyFeeds() async throws(StoreError) -> Set<Int64> {
        try await read { db in
            Set(
                try Int64.fetchAll(
                    db, sql: "SELECT id FROM feed WHERE summary_only = 1 AND full_text = 0 AND account_id IS NULL"))
        }
    }

    /// Each full-text feed's articles: stored, failed, and waiting for a pull.
    public func articleCounts() async throws(StoreError) -> [Int64: ArticleCounts] {
        try await read { db in
            var counts: [Int64: ArticleCounts] = [:]
            for row in try Row.fetchAll(
                db,
                sql: """
                    SELECT item.feed_id,
                        sum(a.status = 'stored' AND a.link = item.link) AS stored,
                        sum(a.status = 'failed' AND a.link = item.link) AS failed
                    FROM item JOIN feed ON feed.id = item.feed_id LEFT JOIN item_article AS a ON a.item_id = item.id
                    WHERE feed.full_text = 1 GROUP BY item.feed_id
                    """)
            {
                counts[row["feed_id"], default: ArticleCounts()].stored = row["stored"] ?? 0
                counts[row["feed_id"], default: ArticleCounts()].failed = row["failed"] ?? 0
            }
            for row in try Row.fetchAll(
                db,
                sql: "SELECT item.feed_id, count(*) AS due FROM item JOIN feed ON feed.id = item.feed_id "
                    + "WHERE \(Self.articleDue) GROUP BY item.feed_id", arguments: [clock.now().timeIntervalSince1970])
            {
                counts[row["feed_id"], default: ArticleCounts()].waiting = row["due"] ?? 0
            }
            return counts
        }
    }
}
