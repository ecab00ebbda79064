import FeedSyncKit
import Foundation

/// The endless list under the reader: the rows of one list of the store (`query`), read a page at
/// a time ahead of where the reader is (keyset reads: a seek however deep), only the rows around
/// the screen held, so memory does not grow with how far the reader scrolls. Rows are numbered
/// from the list's top as it was read (`anchor`): items a pull adds above it since are counted
/// (`fresh`), not shown, until the reader goes back to the top.
package struct ReaderList {
    package private(set) var query: ListQuery
    /// The rows held: those at list rows `first ..< first + rows.count`.
    package private(set) var rows: [StoredItem] = []
    package private(set) var first = 0
    /// How many rows the list has, as the reader numbers them.
    package private(set) var total = 0
    /// The top row as the list was read, and how many rows have landed above it since.
    package private(set) var anchor: ListKey?
    package private(set) var fresh = 0
    /// Whether the end of the list has been read (so `total` is exact there).
    private var endReached = false

    /// Rows read at a time, and how many are kept beyond the screen on either side.
    static let page = 64
    static let margin = 2 * page

    package init(query: ListQuery) { self.query = query }

    /// The row at list row `index`, when held.
    package func row(_ index: Int) -> StoredItem? {
        let at = index - first
        return rows.indices.contains(at) ? rows[at] : nil
    }

    /// Reads the list from its top (or its end, `atEnd`): the rows around it, its length.
    package mutating func start(_ library: FeedSync, query: ListQuery? = nil, atEnd: Bool = false)
        async throws(StoreError)
    {
        if let query { self.query = query }
        total = try await library.total(of: self.query)
        fresh = 0
        endReached = false
        if atEnd {
            rows = try await library.readerRows(self.query, after: nil, backwards: true, limit: Self.page).reversed()
            endReached = true
            let top = try await library.readerRows(self.query, after: nil, limit: 1)
            anchor = top.first?.listKey
            first = max(0, total - rows.count)
            // A count from the feeds' counts may be off from the rows: the end is where they end.
            if rows.count < Self.page { first = 0 }
            total = first + rows.count
        } else {
            rows = try await library.readerRows(self.query, after: nil, limit: Self.page)
            anchor = rows.first?.listKey
            first = 0
            if rows.count < Self.page {
                endReached = true
                total = rows.count
            }
        }
    }

    /// Makes sure the rows from `visible.lowerBound - margin` to `visible.upperBound + margin`
    /// are held (reading ahead a page at a time) and drops those further away.
    package mutating func hold(_ visible: Range<Int>, _ library: FeedSync) async throws(StoreError) {
        let wanted = max(0, visible.lowerBound - Self.margin / 2)..<(visible.upperBound + Self.margin / 2)
        while first + rows.count < wanted.upperBound, !endReached, let last = rows.last?.listKey {
            let more = try await library.readerRows(query, after: last, limit: Self.page)
            rows += more
            if more.count < Self.page {
                endReached = true
                total = first + rows.count
            }
        }
        // Back up to the list's top as it was read, never above it: rows a pull added there wait.
        while first > wanted.lowerBound, let top = rows.first?.listKey {
            let more = try await library.readerRows(query, after: top, backwards: true, limit: min(Self.page, first))
            rows = more.reversed() + rows
            first = more.isEmpty ? 0 : first - more.count
            if more.isEmpty { break }
        }
        total = max(total, first + rows.count)
        // Dropped: what lies beyond the margins.
        let keep = max(0, visible.lowerBound - Self.margin)..<(visible.upperBound + Self.margin)
        if first < keep.lowerBound {
            let drop = min(rows.count, keep.lowerBound - first)
            rows.removeFirst(drop)
            first += drop
        }
        if first + rows.count > keep.upperBound {
            rows.removeLast(min(rows.count, first + rows.count - keep.upperBound))
            endReached = false
        }
    }

    /// Counts the rows a pull added above the list's top, and its new length.
    package mutating func refreshCounts(_ library: FeedSync) async throws(StoreError) -> Bool {
        guard let anchor else {
            let total = try await library.total(of: query)
            defer { fresh = total }
            return total != fresh
        }
        let count = try await library.count(of: query, before: anchor, cap: 10_000)
        defer { fresh = count }
        return count != fresh
    }

    /// Changes a held row (marked read, starred) as the store now has it.
    package mutating func update(_ index: Int, _ change: (inout StoredItem) -> Void) {
        let at = index - first
        guard rows.indices.contains(at) else { return }
        change(&rows[at])
    }
}
