import FeedSyncModel
import Foundation
import GRDB

// The SQL the list and picture calls share: a list's rows in its order, a place's row, due pictures.

extension Store {
    static let listColumns = """
        item.id, key, item.title, item.link, pic_url, coalesce(picture.status, 'none') AS status, picture.id AS picture_id,
        picture.file, picture.bytes, picture.hash, published,
        read, starred, \(feedName) AS feed_name, item.author, item.categories
        """
    /// `Feed.name` in SQL: the user's title, else the feed's own, else its URL's host (and port),
    /// as `Feed.host` cuts it (no user or password). Plain SQL, no function of ours: the
    /// benchmarks' floor replays the lists' statements on SQLite alone.
    static let feedName: String = {
        let rest = "substr(feed.url, instr(feed.url, '//') + 2)"
        let authority = "substr(\(rest), 1, instr(\(rest) || '/', '/') - 1)"
        return "coalesce(feed.custom_title, feed.title, substr(\(authority), instr(\(authority), '@') + 1))"
    }()
    static let listJoin = "LEFT JOIN picture ON picture.id = item.picture_id JOIN feed ON feed.id = item.feed_id"

    static func storedItem(_ row: Row, position: Int) -> StoredItem {
        var item = StoredItem(
            number: row["id"], key: row.text("key") ?? "", title: row.text("title") ?? "",
            link: row.text("link"), pictureURL: row.text("pic_url"),
            imageStatus: row.text("status").flatMap(PictureStatus.init(rawValue:)) ?? .none,
            image: row.text("status") == "cached" ? CachedFile.from(row, id: row["picture_id"]) : nil,
            published: row.text("published"), position: position,
            read: row.integer("read") == 1, starred: row.integer("starred") == 1, feedName: row.text("feed_name") ?? "")
        item.author = row.text("author")
        item.categories = row.text("categories")?.split(separator: "\n").map(String.init) ?? []
        return item
    }

    /// The SQL conditions on `item` that `query`'s filters make, with their arguments; `feeds`
    /// alone, the conditions on `feed` that choose its feeds.
    static func conditions(_ query: ListQuery) -> (
        feeds: [String], feedArguments: StatementArguments, items: [String], arguments: StatementArguments
    ) {
        var feeds: [String] = []
        var conditions: [String] = []
        var arguments: StatementArguments = []
        if let url = query.feedURL {
            feeds.append("url = ?")
            arguments += [url]
        }
        if let folder = query.folder {
            feeds.append("(folder = ? OR substr(folder, 1, length(?) + 1) = ? || '/')")
            arguments += [folder, folder, folder]
        }
        let feedArguments = arguments
        if !feeds.isEmpty {
            conditions.append("item.feed_id IN (SELECT id FROM feed WHERE \(feeds.joined(separator: " AND ")))")
        }
        // A hidden item is in no list but the one that asks for them.
        conditions.append(query.hidden ? "item.hidden = 1" : "item.hidden = 0")
        if query.unread { conditions.append("item.read = 0") }
        if query.starred { conditions.append("item.starred = 1") }
        if let since = query.since {
            conditions.append("item.timeline >= ?")
            arguments += [Int64(since.timeIntervalSince1970.rounded(.up))]
        }
        if let search = query.search {
            conditions.append(
                "(item.id IN (SELECT rowid FROM item_search WHERE item_search MATCH ?)"
                    + " OR item.id IN (SELECT rowid FROM article_search WHERE article_search MATCH ?)"
                    + " OR item.id IN (SELECT rowid FROM item_byline WHERE item_byline MATCH ?))")
            arguments += [search, search, search]
        }
        if let condition = query.condition {
            let (sql, values) = Self.sql(condition)
            conditions.append("(\(sql))")
            arguments += StatementArguments(values)
        }
        return (feeds, feedArguments, conditions, arguments)
    }

    /// A filtered list: one statement for the page, walking the order's index and skipping
    /// `offset` passing rows, so a deep page costs the rows above it.
    static func filteredList(_ db: Database, _ query: ListQuery, offset: Int, limit: Int) throws -> (Int, [StoredItem])
    {
        let conditions = Self.conditions(query)
        let filter = conditions.items.isEmpty ? "" : "WHERE " + conditions.items.joined(separator: " AND ")
        let order = ListOrder(feedURL: query.feedURL).itemOrder
        let rows = try Row.fetchAll(
            db,
            sql: "SELECT \(listColumns) FROM item \(listJoin) \(filter) ORDER BY \(order) LIMIT ? OFFSET ?",
            arguments: conditions.arguments + [limit, offset])
        return (try filteredTotal(db, query), rows.enumerated().map { storedItem($1, position: offset + $0 + 1) })
    }

    /// How many items pass `query`'s filters. The count of unread items comes from the feeds'
    /// counts, a search's alone from the indexes: neither reads an item.
    static func filteredTotal(_ db: Database, _ query: ListQuery) throws -> Int {
        let (feeds, feedArguments, conditions, arguments) = Self.conditions(query)
        if query.search == nil, query.since == nil, !query.starred, query.condition == nil, !query.hidden {
            let scope = feeds.isEmpty ? "" : "WHERE " + feeds.joined(separator: " AND ")
            return try Int.fetchOne(
                db,
                sql: """
                    SELECT coalesce(sum((SELECT coalesce(sum(size), 0) FROM band_size WHERE feed_id = feed.id)
                        \(query.unread ? "- read_count" : "")), 0)
                    FROM feed \(scope)
                    """, arguments: feedArguments) ?? 0
        } else if let search = query.search, conditions.count == 2 {
            return try Int.fetchOne(
                db,
                sql: """
                    SELECT count(*) FROM (SELECT rowid FROM item_search WHERE item_search MATCH ?1
                        UNION SELECT rowid FROM article_search WHERE article_search MATCH ?1
                        UNION SELECT rowid FROM item_byline WHERE item_byline MATCH ?1) AS found
                    WHERE \(query.hidden ? "" : "NOT ") EXISTS (SELECT 1 FROM item WHERE id = found.rowid AND hidden = 1)
                    """, arguments: [search]) ?? 0
        }
        return try Int.fetchOne(
            db, sql: "SELECT count(*) FROM item WHERE \(conditions.joined(separator: " AND "))", arguments: arguments)
            ?? 0
    }

    /// `columns` of the items at list positions `positions` (from 0) of the list `order` that
    /// pass `filter`, each with its position: the first `limit` in the list's order, or with
    /// `backwards`, the last `limit` in reverse order. The list is a row of segments (ListOrder),
    /// each a stretch of consecutive seqs of one feed's band: adding up their sizes finds the
    /// segment where the range starts, and each segment's part is one seek in item's
    /// (feed_id, band, seq) index. `filter` runs inside SQLite, so rows it drops never reach Swift.
    /// `arguments` fill placeholders in `columns`, then in `filter`, so the statement stays one
    /// cached statement.
    static func listRows(
        _ db: Database, _ order: ListOrder, positions: Range<Int>, columns: String,
        join: String = "", filter: String = "1", arguments: StatementArguments = [],
        limit: Int = .max, backwards: Bool = false
    ) throws -> [(position: Int, row: Row)] {
        guard !positions.isEmpty, limit > 0 else { return [] }
        let part = try db.cachedStatement(
            sql: """
                SELECT item.seq, \(columns) FROM item \(join)
                WHERE (\(filter)) AND item.feed_id = ? AND item.band = ? AND item.seq >= ? AND item.seq < ?
                ORDER BY item.seq \(backwards ? "DESC" : "") LIMIT ?
                """)
        var rows: [(position: Int, row: Row)] = []
        // The segments from `cursor` on, the first starting (backwards: ending) at `edge`, until
        // the range or the limit ends.
        func walk(_ cursor: RowCursor, from edge: Int) throws {
            var edge = edge
            while backwards ? edge > positions.lowerBound : edge < positions.upperBound, rows.count < limit,
                let segment = try cursor.next()
            {
                let size = segment.integer("size", in: 0...Int(Int32.max)) ?? 0
                let start = backwards ? edge - size : edge
                edge = backwards ? start : start + size
                let first = max(0, positions.lowerBound - start)
                let end = min(size, positions.upperBound - start)
                guard first < end else { continue }
                let firstSeq = segment.integer("first_seq", in: 0...Int(Int32.max)) ?? 0
                rows += try Row.fetchAll(
                    part,
                    arguments: arguments + [
                        segment["feed_id"], segment["band"], firstSeq + first, firstSeq + end, limit - rows.count,
                    ]
                ).map { (start - firstSeq + $0[0], $0) }
            }
        }
        if case .timeline = order, filter != "1" {
            try walkTimelineBuckets(
                db, positions: positions, backwards: backwards, done: { rows.count >= limit },
                anyPasses: try db.cachedStatement(
                    sql: """
                        SELECT \(columns) FROM item \(join)
                        WHERE (\(filter)) AND item.timeline >= ? AND item.timeline < ? LIMIT 1
                        """), arguments: arguments, walk: walk)
        } else {
            // From the segment holding the range's first position (or, backwards, its last), on.
            let (edge, segments) = try order.segments(
                db, from: backwards ? positions.upperBound - 1 : positions.lowerBound, backwards: backwards)
            try walk(segments, from: edge)
        }
        return rows
    }

    /// A filtered walk of the timeline, bucket by bucket: in the timeline a run is often one item
    /// (items of different times), so a long range would be a statement per item; a bucket none of
    /// whose items pass the filter (`anyPasses`, given `arguments` and the bucket's bounds) is
    /// passed with that one statement. Calls `walk` with each other bucket's runs.
    private static func walkTimelineBuckets(
        _ db: Database, positions: Range<Int>, backwards: Bool, done: () -> Bool, anyPasses: Statement,
        arguments: StatementArguments, walk: (RowCursor, Int) throws -> Void
    ) throws {
        let buckets = try Row.fetchAll(
            db, sql: "SELECT bucket, size FROM timeline_bucket ORDER BY bucket \(backwards ? "" : "DESC")")
        var edge = backwards ? buckets.reduce(0) { $0 + ($1.integer("size", in: 0...Int(Int32.max)) ?? 0) } : 0
        for bucket in buckets where !done() {
            let size = bucket.integer("size", in: 0...Int(Int32.max)) ?? 0
            let start = backwards ? edge - size : edge
            edge = backwards ? start : start + size
            if backwards ? start + size <= positions.lowerBound : start >= positions.upperBound { break }
            guard start < positions.upperBound, start + size > positions.lowerBound else { continue }
            let number: Int64 = bucket["bucket"]
            let bounds: StatementArguments = [number << 16, (number + 1) << 16]
            // Only a bucket wholly in the range is asked: asking one the range takes part of would
            // read all its items (a million, where a feed's items share one time) for a few rows.
            if start >= positions.lowerBound, start + size <= positions.upperBound {
                guard try Row.fetchOne(anyPasses, arguments: arguments + bounds) != nil else { continue }
            }
            let (edge, runs) = try ListOrder.timeline.runs(
                db, bucket: number, start: start, size: size, backwards, onlyThatBucket: true)
            try walk(runs, edge)
        }
    }

    /// The row (0-based) that `place` is at now in the list `order`; nil when no item is there.
    static func row(_ db: Database, of place: ListPlace, in order: ListOrder) throws -> Int? {
        switch order {
        case .feed(let url):
            let above = try Int.fetchOne(
                db,
                sql: """
                    SELECT sum(size) FROM band_size
                    WHERE feed_id = (SELECT id FROM feed WHERE url = ?) AND feed_id = ? AND band < ?
                    """, arguments: [url, place.feedID, place.band])
            return (above ?? 0) + place.seq
        case .timeline:
            guard let (time, firstSeq, _) = try run(db, holding: place) else { return nil }
            let above =
                try Int.fetchOne(
                    db,
                    sql: """
                        SELECT (SELECT coalesce(sum(size), 0) FROM timeline_bucket WHERE bucket > ?1 >> 16)
                            + (SELECT coalesce(sum(size), 0) FROM timeline_run
                               WHERE timeline < ((?1 >> 16) + 1) << 16
                                   AND (timeline > ?1 OR (timeline = ?1 AND (feed_id, band, first_seq) < (?2, ?3, ?4))))
                        """, arguments: [time, place.feedID, place.band, firstSeq]) ?? 0
            return above + place.seq - firstSeq
        }
    }

    /// The timeline run that holds the item at `place`: its time, first seq and size; nil when no
    /// item is there.
    static func run(_ db: Database, holding place: ListPlace) throws -> (time: Int64, firstSeq: Int, size: Int)? {
        try Row.fetchOne(
            db.cachedStatement(
                sql: """
                    SELECT run.timeline, run.first_seq, run.size FROM item
                    JOIN timeline_run AS run ON run.timeline = item.timeline AND run.feed_id = item.feed_id
                        AND run.band = item.band AND run.first_seq <= item.seq
                    WHERE item.feed_id = ? AND item.band = ? AND item.seq = ?
                    ORDER BY run.first_seq DESC LIMIT 1
                    """), arguments: [place.feedID, place.band, place.seq]
        ).map { ($0[0], $0[1], $0[2]) }
    }

    /// The one test of whether a picture is due for a download: not cached, and not waiting out
    /// a backoff at the time bound to `now` (a parameter: "?", "?2").
    static func pictureIsDue(_ now: String) -> String {
        "picture.status != 'cached' AND coalesce(picture.next_attempt_at <= \(now), 1)"
    }

    static func duePictures(
        _ db: Database, feedURL: String?, rows: Range<Int>, limit: Int, backwards: Bool = false,
        now: Date
    ) throws -> [PictureJob] {
        // One read per band, the picture's state joined in and tested by SQLite: only due rows
        // reach Swift.
        let found = try listRows(
            db, ListOrder(feedURL: feedURL), positions: rows,
            columns: "item.picture_id, picture.url, item.feed_id, item.band",
            join: "JOIN picture ON picture.id = item.picture_id",
            filter: Self.pictureIsDue("?"),
            arguments: [now.timeIntervalSince1970], limit: limit, backwards: backwards)
        return pictureJobs(found)
    }

    /// One job per picture, at the first of `rows` that shows it. Each row's columns are
    /// `seq, picture_id, url, feed_id, band`, as `listRows` gives them.
    static func pictureJobs(_ rows: [(position: Int, row: Row)]) -> [PictureJob] {
        var seen = Set<Int64>()
        return rows.compactMap { position, row in
            let id: Int64 = row[1]
            guard seen.insert(id).inserted else { return nil }
            return PictureJob(
                id: id, url: row.text("url") ?? "", row: position,
                place: ListPlace(feedID: row[3], band: row[4], seq: row[0]))
        }
    }

    static func dueArticlePictures(_ db: Database, feedURL: String?, rows: Range<Int>, limit: Int, now: Date) throws
        -> [PictureJob]
    {
        let found = try listRows(
            db, ListOrder(feedURL: feedURL), positions: rows,
            columns: "shown.picture_id, picture.url, item.feed_id, item.band, shown.position",
            join: """
                JOIN item_content_picture AS shown ON shown.item_id = item.id
                JOIN picture ON picture.id = shown.picture_id
                """,
            filter: Self.pictureIsDue("?"), arguments: [now.timeIntervalSince1970], limit: limit)
        return pictureJobs(found.sorted { ($0.position, $0.row[5] as Int) < ($1.position, $1.row[5] as Int) })
    }

    /// The pictures inside the content of item `number`, in order, with their state.
    static func articlePictures(_ db: Database, ofItem number: Int64) throws -> [ArticlePicture] {
        try Row.fetchAll(
            db,
            sql: """
                SELECT shown.position, shown.source, picture.url, picture.status, picture.id, picture.file,
                    picture.bytes, picture.hash
                FROM item_content_picture AS shown JOIN picture ON picture.id = shown.picture_id
                WHERE shown.item_id = ? ORDER BY shown.position
                """, arguments: [number]
        ).map { row in
            ArticlePicture(
                position: row["position"], source: row.text("source") ?? "", url: row.text("url") ?? "",
                status: PictureStatus(rawValue: row.text("status") ?? "") ?? .pending,
                cached: row.text("status") == "cached" ? CachedFile.from(row) : nil)
        }
    }

    static func deleteUnusedPictures(_ db: Database) throws -> [String] {
        let unused = """
            FROM picture WHERE NOT EXISTS (SELECT 1 FROM item WHERE item.picture_id = picture.id)
                AND NOT EXISTS (SELECT 1 FROM item_content_picture WHERE picture_id = picture.id)
            """
        let files = try String?.fetchAll(db, sql: "SELECT file \(unused)").compactMap { $0 }
        try db.execute(sql: "DELETE \(unused)")
        return files
    }
}

/// The order of a list without filters, as segments: stretches of consecutive seqs of one feed's
/// band, each a part of the list on its own (Migrations/0003 and 0006 say how they are kept).
enum ListOrder: Equatable {
    /// One feed's list: its bands, highest first, each a segment from seq 0.
    case feed(String)
    /// All feeds, newest first: the timeline's runs.
    case timeline

    init(feedURL: String?) {
        self = feedURL.map(Self.feed) ?? .timeline
    }

    /// The order as an SQL `ORDER BY` of item rows (what the segments add up to).
    var itemOrder: String {
        switch self {
        case .feed: "item.band, item.seq"
        case .timeline: "item.timeline DESC, item.feed_id, item.band, item.seq"
        }
    }

    /// How many items the list holds.
    func total(_ db: Database) throws -> Int {
        switch self {
        case .feed(let url):
            try Int.fetchOne(
                db,
                sql: "SELECT coalesce(sum(size), 0) FROM band_size WHERE feed_id = (SELECT id FROM feed WHERE url = ?)",
                arguments: [url]) ?? 0
        case .timeline:
            try Int.fetchOne(db, sql: "SELECT coalesce(sum(size), 0) FROM timeline_bucket") ?? 0
        }
    }

    /// The segments (`feed_id`, `band`, `first_seq`, `size`) in the list's order, or with
    /// `backwards` in reverse, from one holding `position` or before it (backwards: at or after
    /// it), with the position where the first one starts (backwards: where it ends). A feed has a
    /// few bands, read from its first or last; the timeline skips whole buckets of 2^16 seconds
    /// by their sizes, so a deep page reads only the runs of its bucket.
    func segments(_ db: Database, from position: Int, backwards: Bool) throws -> (Int, RowCursor) {
        switch self {
        case .feed(let url):
            let cursor = try Row.fetchCursor(
                db,
                sql: """
                    SELECT feed_id, band, 0 AS first_seq, size FROM band_size
                    WHERE feed_id = (SELECT id FROM feed WHERE url = ?) ORDER BY band \(backwards ? "DESC" : "")
                    """, arguments: [url])
            return (backwards ? try total(db) : 0, cursor)
        case .timeline:
            let buckets = try Row.fetchCursor(db, sql: "SELECT bucket, size FROM timeline_bucket ORDER BY bucket DESC")
            var start = 0
            var bucket: Int64?
            while let row = try buckets.next() {
                let size = row.integer("size", in: 0...Int(Int32.max)) ?? 0
                bucket = row["bucket"]
                if start + size > position { return try runs(db, bucket: bucket!, start: start, size: size, backwards) }
                start += size
            }
            // Past the end: forwards nothing is left; backwards, from the last bucket's end.
            return try runs(db, bucket: backwards ? bucket : nil, start: start, size: 0, backwards)
        }
    }

    /// The runs from `bucket`'s first on (backwards, from its last back), the first starting at
    /// `start` (backwards: the last ending at `start + size`); with `onlyThatBucket`, its runs alone.
    func runs(
        _ db: Database, bucket: Int64?, start: Int, size: Int, _ backwards: Bool, onlyThatBucket: Bool = false
    ) throws -> (Int, RowCursor) {
        guard let bucket else { return (start, try Row.fetchCursor(db, sql: "SELECT 1 WHERE 0")) }
        // Backwards from the bucket's start up (the list's end first), else down from its end.
        var bounds: [String] = []
        var arguments: StatementArguments = []
        if backwards || onlyThatBucket {
            bounds.append("timeline >= ?")
            arguments += [bucket << 16]
        }
        if !backwards || onlyThatBucket {
            bounds.append("timeline < ?")
            arguments += [(bucket + 1) << 16]
        }
        let cursor = try Row.fetchCursor(
            db,
            sql: """
                SELECT feed_id, band, first_seq, size FROM timeline_run WHERE \(bounds.joined(separator: " AND "))
                ORDER BY \(backwards ? "timeline, feed_id DESC, band DESC, first_seq DESC"
                    : "timeline DESC, feed_id, band, first_seq")
                """, arguments: arguments)
        return (backwards ? start + size : start, cursor)
    }
}
