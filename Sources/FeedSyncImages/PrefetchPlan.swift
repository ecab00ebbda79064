import FeedSyncModel
import FeedSyncStore

/// Which list rows to prefetch pictures for, and in what order: the rows nearest to the page the
/// reader is on first, as a table view asks for the rows nearest the visible ones.
public enum PrefetchPlan {
    /// The rows (0-based) of the window: one page before the reading page to `pagesAhead` after it.
    public static func window(_ position: ReadingPosition, pagesAhead: Int) -> Range<Int> {
        let start = max(0, (position.page - 2) * position.perPage)
        return start..<((position.page + pagesAhead) * position.perPage)
    }

    /// The row given to a picture outside the list being read: farther than any row of it.
    public static let far = Int(Int32.max)

    /// 0 for a row on the reading page; otherwise how many rows away from it.
    public static func distance(ofRow row: Int, from position: ReadingPosition) -> Int {
        let page = position.rows
        if row < page.lowerBound { return page.lowerBound - row }
        if row >= page.upperBound { return row - page.upperBound + 1 }
        return 0
    }

    /// Jobs nearest first; at equal distance the row below (where readers go next) first; jobs of
    /// one row (the pictures inside one article) in the order given.
    public static func order(_ jobs: [PictureJob], from position: ReadingPosition) -> [PictureJob] {
        let start = position.rows.lowerBound
        return jobs.enumerated().sorted { first, second in
            let (a, b) = (first.element, second.element)
            let (near, far) = (distance(ofRow: a.row, from: position), distance(ofRow: b.row, from: position))
            if near != far { return near < far }
            if a.row == b.row { return first.offset < second.offset }
            return (a.row >= start) != (b.row >= start) ? a.row >= start : a.row < b.row
        }.map(\.element)
    }
}
