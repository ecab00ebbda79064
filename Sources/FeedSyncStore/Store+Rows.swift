import FeedSyncFeed
import Foundation
import GRDB

// Values read back from the store, leniently. SQLite keeps whatever a column is given, and a store
// edited by another tool or damaged on disk may hold a blob of bytes that are not UTF-8, or a
// number, where text belongs: GRDB's typed subscripts trap on those. Text is decoded with
// replacement characters; a number where text belongs is its decimal text; anything that is not
// a whole number where one belongs is absent.
extension Row {
    func text(_ column: String) -> String? {
        switch (self[column] as DatabaseValue).storage {
        case .null: nil
        case .string(let text): text
        case .blob(let bytes): String(decoding: bytes, as: UTF8.self)
        case .int64(let number): String(number)
        case .double(let number): String(number)
        }
    }

    func integer(_ column: String) -> Int? {
        switch (self[column] as DatabaseValue).storage {
        case .int64(let number): Int(number)
        case .double(let number): Int(exactly: number)
        case .string(let text): Int(text)
        case .null, .blob: nil
        }
    }

    /// A whole number within `range`, else absent: a value that feeds arithmetic.
    func integer(_ column: String, in range: ClosedRange<Int>) -> Int? {
        integer(column).flatMap { range.contains($0) ? $0 : nil }
    }

    func real(_ column: String) -> Double? {
        switch (self[column] as DatabaseValue).storage {
        case .int64(let number): Double(number)
        case .double(let number): number.isFinite ? number : nil
        case .string(let text): Double(text).flatMap { $0.isFinite ? $0 : nil }
        case .null, .blob: nil
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
        historyStop = row.text("history_stop")
        historyRetryAt = row.real("history_retry_at").map(Date.init(timeIntervalSince1970:))
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
