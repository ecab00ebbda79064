import FeedSyncModel
import Foundation
import GRDB

// The rows whose mapping more than one statement reads or writes, each one type with its
// columns (GRDB's record practice): where an item sits, a picture to fetch, a reading position.

extension ListPlace {
    /// An item's `feed_id`, `band` and `seq` columns.
    enum Columns {
        static let feedID = Column("feed_id")
        static let band = Column("band")
        static let seq = Column("seq")
    }

    /// The place in a row that selected `Columns`.
    init(row: Row) {
        self.init(feedID: row[Columns.feedID], band: row[Columns.band], seq: row[Columns.seq])
    }
}

extension PictureJob {
    /// A picture's `id` and `url`, with the place of the item that shows it (`ListPlace.Columns`).
    enum Columns {
        static let id = Column("id")
        static let url = Column("url")
    }

    /// The job in a row that selected `Columns` and the item's `ListPlace.Columns`, at list row `row`.
    init(row: Row, at listRow: Int) {
        self.init(id: row[Columns.id], url: row.text("url") ?? "", row: listRow, place: ListPlace(row: row))
    }
}

/// A `reading_position` row: the page the reader was shown last in one list, the all-feeds
/// timeline's `scope` being `*`, a feed's its URL.
struct ReadingPositionRecord: FetchableRecord, PersistableRecord {
    static let databaseTableName = "reading_position"

    enum Columns {
        static let scope = Column("scope")
        static let page = Column("page")
        static let perPage = Column("per_page")
        static let updatedAt = Column("updated_at")
    }

    /// The scope of the all-feeds timeline.
    static let allFeeds = "*"

    var position: ReadingPosition
    var updatedAt: Double

    init(_ position: ReadingPosition, at updatedAt: Date) {
        self.position = position
        self.updatedAt = updatedAt.timeIntervalSince1970
    }

    /// Read leniently and clamped: the row is read by every pull, and a value an older version
    /// or another tool wrote must not make each of them fail.
    init(row: Row) {
        let scope = row.text("scope") ?? Self.allFeeds
        position = ReadingPosition(
            feedURL: scope == Self.allFeeds ? nil : scope,
            page: (row.integer("page") ?? 1).clamped(to: ReadingPosition.pages),
            perPage: (row.integer("per_page") ?? ReadingPosition.start.perPage).clamped(to: ReadingPosition.perPages))
        updatedAt = row[Columns.updatedAt] ?? 0
    }

    func encode(to container: inout PersistenceContainer) {
        container[Columns.scope] = position.feedURL ?? Self.allFeeds
        container[Columns.page] = position.page
        container[Columns.perPage] = position.perPage
        container[Columns.updatedAt] = updatedAt
    }
}
