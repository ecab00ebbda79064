import FeedSyncFeed
import FeedSyncMarkup
import FeedSyncModel
import Foundation
import GRDB

// Values read back from the store, leniently. SQLite keeps whatever a column is given, and a store
// edited by another tool or damaged on disk may hold a blob of bytes that are not UTF-8, or a
// number, where text belongs: GRDB's typed subscripts trap on those. Text is decoded with
// replacement characters; a number where text belongs is its decimal text; anything that is not
// a whole number where one belongs is absent.
extension DatabaseValue {
    var text: String? {
        switch storage {
        case .null: nil
        case .string(let text): text
        case .blob(let bytes): String(decoding: bytes, as: UTF8.self)
        case .int64(let number): String(number)
        case .double(let number): String(number)
        }
    }

    var integer: Int? {
        switch storage {
        case .int64(let number): Int(number)
        case .double(let number): Int(exactly: number)
        case .string(let text): Int(text)
        case .null, .blob: nil
        }
    }

    /// A whole number within `range`, else absent: a value that feeds arithmetic.
    func integer(in range: ClosedRange<Int>) -> Int? {
        integer.flatMap { range.contains($0) ? $0 : nil }
    }

    var real: Double? {
        switch storage {
        case .int64(let number): Double(number)
        case .double(let number): number.isFinite ? number : nil
        case .string(let text): Double(text).flatMap { $0.isFinite ? $0 : nil }
        case .null, .blob: nil
        }
    }
}

extension Row {
    func text(_ column: String) -> String? { (self[column] as DatabaseValue).text }

    func integer(_ column: String) -> Int? { (self[column] as DatabaseValue).integer }

    func integer(_ column: String, in range: ClosedRange<Int>) -> Int? {
        (self[column] as DatabaseValue).integer(in: range)
    }

    func real(_ column: String) -> Double? { (self[column] as DatabaseValue).real }
}

/// The feed table's columns a `Feed` is read from. Selected in this order (`selection`), a row of
/// many is read by position: finding thirty columns by name in every row (GRDB lowers the case of
/// both names at each comparison, or hashes them) and decoding each through GRDB's generic path
/// was a third of `feeds`' time for 1 000 feeds.
enum FeedColumn: Int32, CaseIterable {
    case id, url, gapBand, gapPage, format, formatChosen, etag, lastModified, bodyHash, remoteTotal,
        perPage, backfillPage, backfillUrl, backfillTotal, backfillDone, backfillNote, gapTotal, gapUrl,
        lastPullAt, lastOutcome, lastError, malformed, nextRetryAt, dueAt, dueReason, failures,
        unanswered, historyStop, historyRetryAt, ttl, updateInterval, skipHours, skipDays, redirectUrl,
        movedFrom, movedAt, goneAt, title, siteUrl, customTitle, folder, accountId, sourceUrl, remoteKey, fullText

    /// The column's name in the table.
    var name: String { Self.names[Int(rawValue)] }

    /// The cases' names in the table, in their order.
    static let names = """
            id url gap_band gap_page format format_chosen etag last_modified body_hash remote_total per_page
            backfill_page backfill_url backfill_total backfill_done backfill_note gap_total gap_url
            last_pull_at last_outcome last_error malformed next_retry_at due_at due_reason failures
            unanswered history_stop history_retry_at ttl update_interval skip_hours skip_days redirect_url
            moved_from moved_at gone_at title site_url custom_title folder account_id source_url remote_key full_text
        """.split(whereSeparator: \.isWhitespace).map(String.init)

    /// Every column of the feed table, in this order, for a `SELECT`.
    static let selection = allCases.map { "feed.\($0.name)" }.joined(separator: ", ")
}

extension Statement {
    /// The value in column `index` of the row the statement is on.
    func value(at index: CInt) -> DatabaseValue { DatabaseValue(sqliteStatement: sqliteStatement, index: index) }
}

extension Feed: FetchableRecord {
    public init(row: Row) {
        self.init { row[$0.name] as DatabaseValue }
    }

    /// Every feed, in the order they were added, each read from its statement's row by position.
    static func all(_ db: Database) throws -> [Feed] {
        let statement = try db.makeStatement(sql: "SELECT \(FeedColumn.selection) FROM feed ORDER BY id")
        return try Array(Row.fetchCursor(statement).map { _ in Feed(statement) })
    }

    /// The feed of the row `statement` is on, which selected `FeedColumn.selection` first.
    init(_ statement: Statement) {
        self.init { statement.value(at: $0.rawValue) }
    }

    /// The feed whose columns `value` gives.
    private init(_ value: (FeedColumn) -> DatabaseValue) {
        // Read leniently, and the numbers the paging arithmetic uses within FeedCursor's ranges: a
        // value out of range is unknown, as if the server had not said it.
        self.init(id: 0, url: "", formatChosen: false, cursor: FeedCursor())
        id = Int64(value(.id).integer ?? 0)
        url = value(.url).text ?? ""
        let gapBand = value(.gapBand).integer(in: FeedCursor.bands)
        let gapPage = value(.gapPage).integer(in: FeedCursor.pages)
        // "auto" (or a name this version does not know): found from the next document.
        format = value(.format).text.flatMap(FeedFormat.init(rawValue:))
        formatChosen = value(.formatChosen).integer == 1
        cursor = FeedCursor(
            etag: value(.etag).text, lastModified: value(.lastModified).text, bodyHash: value(.bodyHash).text,
            remoteTotal: value(.remoteTotal).integer(in: FeedCursor.totals),
            perPage: value(.perPage).integer(in: FeedCursor.perPages),
            backfillPage: value(.backfillPage).integer(in: FeedCursor.pages), backfillURL: value(.backfillUrl).text,
            backfillTotal: value(.backfillTotal).integer(in: FeedCursor.totals),
            backfillDone: value(.backfillDone).integer == 1, backfillNote: value(.backfillNote).text,
            gap: gapBand.flatMap { band in
                gapPage.map {
                    FeedCursor.Walk(
                        band: band, page: $0, total: value(.gapTotal).integer(in: FeedCursor.totals),
                        url: value(.gapUrl).text)
                }
            })
        lastPullAt = value(.lastPullAt).real.map(Date.init(timeIntervalSince1970:))
        lastOutcome = value(.lastOutcome).text.flatMap(PullOutcome.init(rawValue:))
        lastError = value(.lastError).text
        malformed = value(.malformed).text
        nextRetryAt = value(.nextRetryAt).real.map(Date.init(timeIntervalSince1970:))
        dueAt = value(.dueAt).real.map(Date.init(timeIntervalSince1970:))
        dueReason = value(.dueReason).text
        failures = value(.failures).integer(in: 0...1_000_000) ?? 0
        unanswered = value(.unanswered).integer(in: 0...1_000_000) ?? 0
        historyStop = value(.historyStop).text
        historyRetryAt = value(.historyRetryAt).real.map(Date.init(timeIntervalSince1970:))
        schedule = FeedSchedule(
            ttlMinutes: value(.ttl).integer(in: 0...525_600),
            updateSeconds: value(.updateInterval).integer(in: 1...Int(Int32.max)),
            skipHours: value(.skipHours).integer(in: 0...0xFF_FFFF) ?? 0,
            skipDays: value(.skipDays).integer(in: 0...0x7F) ?? 0)
        redirectURL = value(.redirectUrl).text
        movedFrom = value(.movedFrom).text
        movedAt = value(.movedAt).real.map(Date.init(timeIntervalSince1970:))
        goneAt = value(.goneAt).real.map(Date.init(timeIntervalSince1970:))
        title = value(.title).text
        siteURL = value(.siteUrl).text
        customTitle = value(.customTitle).text
        folder = value(.folder).text
        accountID = value(.accountId).integer.map(Int64.init)
        sourceURL = value(.sourceUrl).text
        remoteID = value(.remoteKey).text
        fullText = value(.fullText).integer == 1
    }
}

extension CachedFile {
    /// From a row's `file`, `bytes`, `hash` and (unless given) `id` columns; nil without a file.
    static func from(_ row: Row, id: Int64? = nil) -> CachedFile? {
        guard let file = row.text("file"), let id = id ?? row["id"] else { return nil }
        return CachedFile(
            id: id, file: file, bytes: Int64(row.integer("bytes", in: 0...(1 << 40)) ?? -1),
            hash: (row["hash"] as Int64?).map { UInt64(bitPattern: $0) })
    }
}
