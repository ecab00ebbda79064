import FeedSyncFeed
import FeedSyncMarkup
import FeedSyncModel
import Foundation
import GRDB

extension Store {
    static let accountColumns = """
        id, name, kind, url, user_name, backfill_place, backfill_done, last_id, head_since, head_place, head_band,
        counters, state_at, last_sync_at, last_outcome, last_error
        """

    static func account(_ row: Row) -> Account {
        var cursor = AccountCursor()
        cursor.backfillPlace = row.text("backfill_place")
        cursor.backfillDone = row.integer("backfill_done", in: 0...1) == 1
        cursor.lastID = row.text("last_id")
        if let place = row.text("head_place"), let band = row.integer("head_band", in: FeedCursor.bands) {
            cursor.head = (row.text("head_since"), place, band)
        }
        return Account(
            id: row["id"], name: row["name"], kind: row["kind"], url: row["url"], user: row["user_name"],
            cursor: cursor, counters: row["counters"],
            stateAt: (row["state_at"] as Double?).map(Date.init(timeIntervalSince1970:)),
            lastSyncAt: (row["last_sync_at"] as Double?).map(Date.init(timeIntervalSince1970:)),
            lastOutcome: (row["last_outcome"] as String?).flatMap(PullOutcome.init(rawValue:)),
            lastError: row["last_error"])
    }

    /// Every account, in the order they were added.
    public func accounts() async throws(StoreError) -> [Account] {
        try await read { db in
            try Row.fetchAll(db, sql: "SELECT \(Self.accountColumns) FROM account ORDER BY id").map(Self.account)
        }
    }

    /// Adds an account; nil when one of that name exists.
    public func addAccount(name: String, kind: String, url: String, user: String) async throws(StoreError) -> Account? {
        try await write { db in
            try db.execute(
                sql: """
                    INSERT INTO account (name, kind, url, user_name, added_at) VALUES (?, ?, ?, ?, ?)
                    ON CONFLICT (name) DO NOTHING
                    """,
                arguments: [name, kind, url, user, clock.now().timeIntervalSince1970])
            guard db.changesCount == 1 else { return nil }
            return try Row.fetchOne(
                db, sql: "SELECT \(Self.accountColumns) FROM account WHERE id = ?", arguments: [db.lastInsertedRowID]
            ).map(Self.account)
        }
    }

    /// Removes an account with its feeds, their items and the pictures no other item uses; returns
    /// the files of the pictures that went.
    public func removeAccount(id: Int64) async throws(StoreError) -> [String] {
        try await write { db in
            try db.execute(sql: "DELETE FROM feed WHERE account_id = ?", arguments: [id])
            try db.execute(sql: "DELETE FROM account WHERE id = ?", arguments: [id])
            return try Self.deleteUnusedPictures(db)
        }
    }

    /// Makes the account's feeds those of its server: titles, folders and addresses as there. A
    /// feed gone from the server stays while it holds items (they are the reader's); an empty one goes.
    public func setAccountFeeds(_ accountID: Int64, url: String, _ feeds: [(feed: RemoteFeed, folder: String?)])
        async throws(StoreError)
    {
        try await write { db in
            let upsert = try db.cachedStatement(
                sql: """
                    INSERT INTO feed (url, added_at, format, title, folder, source_url, account_id, remote_key)
                    VALUES (?, ?, 'auto', ?, ?, ?, ?, ?)
                    ON CONFLICT (url) DO UPDATE SET title = excluded.title, folder = excluded.folder,
                        source_url = excluded.source_url
                    """)
            let now = clock.now().timeIntervalSince1970
            for (feed, folder) in feeds {
                try upsert.execute(arguments: [
                    Self.accountFeedURL(url, feed.id), now, feed.title, folder, feed.url, accountID, feed.id,
                ])
            }
            let kept = Set(feeds.map(\.feed.id))
            let listed = try Row.fetchAll(
                db, sql: "SELECT id, remote_key FROM feed WHERE account_id = ? AND remote_key IS NOT NULL",
                arguments: [accountID])
            let delete = try db.cachedStatement(
                sql: "DELETE FROM feed WHERE id = ? AND NOT EXISTS (SELECT 1 FROM item WHERE item.feed_id = feed.id)")
            for row in listed where !kept.contains(row["remote_key"]) { try delete.execute(arguments: [row["id"]]) }
        }
    }

    /// The feed URL an account's feed is stored under: the account's own, and the server's id.
    static func accountFeedURL(_ accountURL: String, _ remoteID: String) -> String {
        accountURL + "#feed=" + (remoteID.addingPercentEncoding(withAllowedCharacters: .urlFragmentAllowed) ?? remoteID)
    }

    /// Stores a page of an account's articles, in the server's order, into `band` of their feeds,
    /// with their read and starred state except where a mark is queued, and the cursor after them,
    /// in one transaction. A feed the server has not listed yet is made from the article's name for it.
    /// `unavailable`: ids asked for that the server did not give, not to be asked again.
    /// Returns how many were new.
    @discardableResult
    public func commitAccountPage(
        _ account: Account, _ articles: [RemoteArticle], band: Int, cursor: AccountCursor,
        unavailable: [String] = []
    ) async throws(StoreError) -> Int {
        try await write { db in
            var feeds = Dictionary(
                uniqueKeysWithValues: try Row.fetchAll(
                    db, sql: "SELECT remote_key, id FROM feed WHERE account_id = ? AND remote_key IS NOT NULL",
                    arguments: [account.id]
                ).map { ($0["remote_key"] as String, $0["id"] as Int64) })
            var groups: [String: [RemoteArticle]] = [:]
            var order: [String] = []
            for article in articles {
                if groups[article.feedID] == nil { order.append(article.feedID) }
                groups[article.feedID, default: []].append(article)
            }
            var added = 0
            let state = try db.cachedStatement(
                sql: """
                    UPDATE item SET
                        read = CASE WHEN EXISTS (SELECT 1 FROM sync_status WHERE item_id = item.id AND field = 'read')
                                OR \(Self.catchUpCovers)
                            THEN read ELSE ? END,
                        starred = CASE WHEN EXISTS (SELECT 1 FROM sync_status WHERE item_id = item.id AND field = 'starred')
                            THEN starred ELSE ? END
                    WHERE feed_id = ? AND key = ?
                    """)
            for remoteFeed in order {
                let group = groups[remoteFeed]!
                let feedID: Int64
                if let known = feeds[remoteFeed] {
                    feedID = known
                } else {
                    try db.execute(
                        sql: """
                            INSERT INTO feed (url, added_at, format, title, account_id, remote_key)
                            VALUES (?, ?, 'auto', ?, ?, ?)
                            """,
                        arguments: [
                            Self.accountFeedURL(account.url, remoteFeed), clock.now().timeIntervalSince1970,
                            group[0].feedTitle, account.id, remoteFeed,
                        ])
                    feedID = db.lastInsertedRowID
                    feeds[remoteFeed] = feedID
                }
                added += try writeItems(db, feedID: feedID, band: band, new: group.map(\.item), updated: [])
                for article in group {
                    try state.execute(arguments: [!article.unread, article.starred, feedID, article.item.key])
                }
            }
            try Self.writeAccountCursor(db, account.id, cursor)
            // No later than now: a catch-up up to a time to come would mark what arrives meanwhile.
            if let newest = articles.compactMap(\.time).max() {
                try db.execute(
                    sql: "UPDATE account SET newest_time = max(coalesce(newest_time, 0), min(?, ?)) WHERE id = ?",
                    arguments: [newest, Int64(clock.now().timeIntervalSince1970 * 1_000_000), account.id])
            }
            let missing = try db.cachedStatement(
                sql: "INSERT INTO remote_missing (account_id, key) VALUES (?, ?) ON CONFLICT DO NOTHING")
            for key in unavailable { try missing.execute(arguments: [account.id, key]) }
            return added
        }
    }

    static func writeAccountCursor(_ db: Database, _ accountID: Int64, _ cursor: AccountCursor) throws {
        try db.execute(
            sql: """
                UPDATE account SET backfill_place = ?, backfill_done = ?, last_id = ?, head_since = ?,
                    head_place = ?, head_band = ?
                WHERE id = ?
                """,
            arguments: [
                cursor.backfillPlace, cursor.backfillDone, cursor.lastID, cursor.head?.since, cursor.head?.place,
                cursor.head?.band, accountID,
            ])
    }

    /// The band a new walk through an account's newest articles writes to: above every feed's.
    public func newHeadBand(accountID: Int64) async throws(StoreError) -> Int {
        try await read { db in
            let top = try Int.fetchOne(
                db,
                sql: """
                    SELECT min(band) FROM band_size WHERE feed_id IN (SELECT id FROM feed WHERE account_id = ?)
                    """,
                arguments: [accountID])
            return (top ?? 0) - 1
        }
    }

    /// The marks on the account's items waiting for its server, oldest first.
    public func queuedMarks(accountID: Int64) async throws(StoreError) -> [QueuedMark] {
        try await read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT sync_status.item_id, item.key, sync_status.field, sync_status.value FROM sync_status
                    JOIN item ON item.id = sync_status.item_id JOIN feed ON feed.id = item.feed_id
                    WHERE feed.account_id = ? ORDER BY sync_status.queued_at
                    """,
                arguments: [accountID]
            ).map { row in
                QueuedMark(itemID: row["item_id"], remoteID: row["key"], field: row["field"], value: row["value"])
            }
        }
    }

    /// Forgets the marks the server accepted, each only while it still holds the value sent (one
    /// made again meanwhile waits for the next sync).
    public func dropQueuedMarks(_ marks: [QueuedMark]) async throws(StoreError) {
        try await write { db in
            let delete = try db.cachedStatement(
                sql: "DELETE FROM sync_status WHERE item_id = ? AND field = ? AND value = ?")
            for mark in marks { try delete.execute(arguments: [mark.itemID, mark.field, mark.value]) }
        }
    }

    /// Sets every item of the account read unless its id is in `unread`, starred if in `starred`,
    /// except where a mark is queued. Returns the ids of `unread` and `starred` that no item has
    /// and none had (removed by `gc --older-than`), newest first: articles a walk did not meet.
    @discardableResult
    public func applyAccountState(accountID: Int64, unread: Set<String>, starred: Set<String>)
        async throws(StoreError) -> [String]
    {
        try await write { db in
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT item.id, item.key, item.read, item.starred,
                        EXISTS (SELECT 1 FROM sync_status WHERE item_id = item.id AND field = 'read')
                            OR \(Self.catchUpCovers) AS read_queued,
                        EXISTS (SELECT 1 FROM sync_status WHERE item_id = item.id AND field = 'starred') AS star_queued
                    FROM item JOIN feed ON feed.id = item.feed_id WHERE feed.account_id = ?
                    """,
                arguments: [accountID])
            let setRead = try db.cachedStatement(sql: "UPDATE item SET read = ? WHERE id = ?")
            let setStar = try db.cachedStatement(sql: "UPDATE item SET starred = ? WHERE id = ?")
            for row in rows {
                let remote: String = row["key"]
                let id: Int64 = row["id"]
                let read = !unread.contains(remote)
                let star = starred.contains(remote)
                if !(row["read_queued"] as Bool), (row["read"] as Bool) != read {
                    try setRead.execute(arguments: [read, id])
                }
                if !(row["star_queued"] as Bool), (row["starred"] as Bool) != star {
                    try setStar.execute(arguments: [star, id])
                }
            }
            let listed = unread.union(starred)
            var known = Set(rows.map { $0["key"] as String })
            known.formUnion(
                try String.fetchAll(
                    db,
                    sql: """
                        SELECT item_gone.key FROM item_gone JOIN feed ON feed.id = item_gone.feed_id
                        WHERE feed.account_id = ?
                        """,
                    arguments: [accountID]))
            // An id the server no longer lists may be given again if it comes back.
            let forget = try db.cachedStatement(sql: "DELETE FROM remote_missing WHERE account_id = ? AND key = ?")
            for key in try String.fetchAll(
                db, sql: "SELECT key FROM remote_missing WHERE account_id = ?", arguments: [accountID])
            {
                if listed.contains(key) { known.insert(key) } else { try forget.execute(arguments: [accountID, key]) }
            }
            return listed.subtracting(known).sorted { RemoteID.isNewer($0, than: $1) }
        }
    }

    /// The Google Reader streams the items of `feed` (a table's name in the query) are in: its
    /// own, its label's, every item's; as an SQL list.
    static func streams(of feed: String) -> String {
        "(\(feed).remote_key, 'user/-/label/' || \(feed).folder, 'user/-/state/com.google/reading-list')"
    }

    /// Whether a queued catch-up covers `item`: its read state is then the reader's until the
    /// server accepts the catch-up.
    static let catchUpCovers = """
        EXISTS (SELECT 1 FROM sync_catchup JOIN feed AS covered ON covered.account_id = sync_catchup.account_id
            WHERE covered.id = item.feed_id AND sync_catchup.stream IN \(streams(of: "covered")))
        """

    /// The streams of the account marked read and waiting for its server, oldest first.
    public func queuedCatchUps(accountID: Int64) async throws(StoreError) -> [QueuedCatchUp] {
        try await read { db in
            try Row.fetchAll(
                db,
                sql: "SELECT stream, up_to, queued_at FROM sync_catchup WHERE account_id = ? ORDER BY queued_at",
                arguments: [accountID]
            ).map { row in
                QueuedCatchUp(
                    accountID: accountID, stream: row["stream"], upTo: row["up_to"], queuedAt: row["queued_at"])
            }
        }
    }

    /// A catch-up the server refused (a stream it no longer has): the read items it covers are
    /// queued a mark an item instead, for the next sync.
    public func expandCatchUp(_ catchUp: QueuedCatchUp) async throws(StoreError) {
        try await write { db in
            try db.execute(
                sql: """
                    INSERT INTO sync_status (item_id, field, value, queued_at)
                    SELECT item.id, 'read', 1, ? FROM item JOIN feed ON feed.id = item.feed_id
                    WHERE feed.account_id = ? AND item.read = 1 AND ? IN \(Self.streams(of: "feed"))
                    ON CONFLICT (item_id, field) DO NOTHING
                    """,
                arguments: [clock.now().timeIntervalSince1970, catchUp.accountID, catchUp.stream])
            try db.execute(
                sql: "DELETE FROM sync_catchup WHERE account_id = ? AND stream = ?",
                arguments: [catchUp.accountID, catchUp.stream])
        }
    }

    /// Forgets a catch-up the server accepted, unless it was queued again meanwhile.
    public func dropCatchUp(_ catchUp: QueuedCatchUp) async throws(StoreError) {
        try await write { db in
            try db.execute(
                sql: "DELETE FROM sync_catchup WHERE account_id = ? AND stream = ? AND up_to = ? AND queued_at = ?",
                arguments: [catchUp.accountID, catchUp.stream, catchUp.upTo, catchUp.queuedAt])
        }
    }

    /// Queues a catch-up of each Google Reader account's stream the items `filter` selects lie in
    /// (`stream`: an SQL expression over `feed`: its own stream, its label's, every item's), up to
    /// the newest time its server gave; forgets the read marks queued for those items, which the
    /// catch-up carries. Returns the condition that selects the items it covers, for the caller to
    /// queue no mark of their own.
    func queueCatchUps(
        _ db: Database, stream: String, where filter: String, _ arguments: [(any DatabaseValueConvertible)?]
    ) throws -> String {
        let covered = """
            feed_id IN (SELECT feed.id FROM feed JOIN account ON account.id = feed.account_id
                WHERE account.kind = 'greader' AND account.newest_time IS NOT NULL)
            """
        try db.execute(
            sql: """
                INSERT INTO sync_catchup (account_id, stream, up_to, queued_at)
                SELECT DISTINCT account.id, \(stream), account.newest_time, ?
                FROM item JOIN feed ON feed.id = item.feed_id JOIN account ON account.id = feed.account_id
                WHERE account.kind = 'greader' AND account.newest_time IS NOT NULL AND \(filter)
                ON CONFLICT (account_id, stream) DO UPDATE SET up_to = excluded.up_to, queued_at = excluded.queued_at
                """,
            arguments: StatementArguments([clock.now().timeIntervalSince1970] + arguments))
        try db.execute(
            sql: """
                DELETE FROM sync_status WHERE field = 'read'
                    AND item_id IN (SELECT item.id FROM item WHERE \(filter) AND \(covered))
                """,
            arguments: StatementArguments(arguments))
        return covered
    }

    /// Records how an account's sync ended; `counters` and `stateAt` when a pass over states ran.
    public func recordAccountSync(
        accountID: Int64, at: Date, outcome: PullOutcome, error: String?, counters: String?, stateAt: Date?
    ) async throws(StoreError) {
        try await write { db in
            try db.execute(
                sql: """
                    UPDATE account SET last_sync_at = ?, last_outcome = ?, last_error = ?,
                        counters = coalesce(?, counters), state_at = coalesce(?, state_at)
                    WHERE id = ?
                    """,
                arguments: [
                    at.timeIntervalSince1970, outcome.rawValue, error, counters, stateAt?.timeIntervalSince1970,
                    accountID,
                ])
        }
    }

    /// Queues `field`'s new value for the server of each account item `filter` selects (its
    /// placeholders filled by `arguments`), one row an item and field: a second change replaces the
    /// first. Call before the items change, when the filter reads what the change sets.
    func queueMarks(
        _ db: Database, field: String, value: Bool, where filter: String,
        _ arguments: [(any DatabaseValueConvertible)?]
    ) throws {
        guard try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM account)") == true else { return }
        try db.cachedStatement(
            sql: """
                INSERT INTO sync_status (item_id, field, value, queued_at)
                SELECT item.id, ?, ?, ? FROM item JOIN feed ON feed.id = item.feed_id
                WHERE feed.account_id IS NOT NULL AND \(filter)
                ON CONFLICT (item_id, field) DO UPDATE SET value = excluded.value, queued_at = excluded.queued_at
                """
        ).execute(arguments: StatementArguments([field, value, clock.now().timeIntervalSince1970] + arguments))
    }
}
