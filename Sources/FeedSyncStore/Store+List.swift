import Foundation
import GRDB

extension Store {
    /// One page of the local list: a feed's items in the server's order, or with `feedURL` nil,
    /// every feed's, feed after feed in the order they were added.
    public func list(feedURL: String?, page: Int, perPage: Int) throws(StoreError) -> ListedPage {
        try read { db in
            let (filter, arguments) = Self.itemFilter(feedURL: feedURL)
            let total = try Int.fetchOne(db, sql: "SELECT count(*) FROM item \(filter)", arguments: arguments) ?? 0
            let offset = (page - 1) * perPage
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT key, title, link, pic_url, coalesce(picture.status, 'none') AS status, picture.file,
                        published
                    FROM item LEFT JOIN picture ON picture.id = item.picture_id \(filter)
                    ORDER BY item.feed_id, item.band, item.seq LIMIT ? OFFSET ?
                    """,
                arguments: arguments + [perPage, offset])
            let items = rows.enumerated().map { index, row in
                StoredItem(
                    key: row["key"], title: row["title"], link: row["link"], pictureURL: row["pic_url"],
                    imageStatus: row["status"], imagePath: row["file"], published: row["published"],
                    position: offset + index + 1)
            }
            let lastPull = try Double.fetchOne(
                db, sql: "SELECT max(last_pull_at) FROM feed \(feedURL == nil ? "" : "WHERE url = ?")",
                arguments: arguments)
            return ListedPage(items: items, total: total, lastPullAt: lastPull.map(Date.init(timeIntervalSince1970:)))
        }
    }

    /// Remembers the page the reader was shown, in the list of one feed or of all feeds.
    public func setReadingPosition(_ position: ReadingPosition) throws(StoreError) {
        try write { db in
            try db.execute(
                sql: """
                    INSERT INTO reading_position (scope, page, per_page, updated_at) VALUES (?, ?, ?, ?)
                    ON CONFLICT (scope) DO UPDATE SET page = excluded.page, per_page = excluded.per_page,
                        updated_at = excluded.updated_at
                    """,
                arguments: [position.feedURL ?? Self.allFeeds, position.page, position.perPage,
                            Date().timeIntervalSince1970])
        }
    }

    /// The `WHERE` clause and its arguments that keep the items of the list of `feedURL`
    /// (every item when nil). Every query that follows the list's order uses it.
    static func itemFilter(feedURL: String?) -> (sql: String, arguments: StatementArguments) {
        guard let feedURL else { return ("", []) }
        return ("WHERE item.feed_id = (SELECT id FROM feed WHERE url = ?)", [feedURL])
    }
}
