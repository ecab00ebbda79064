import FeedSyncModel
import FeedSyncStore

/// What the prefetcher knows of the cache during a run: how full it is, and which planned pictures
/// are worth fetching into it. Eviction takes the cached pictures farthest from the reader outside
/// the window, so a picture farther than all of them would be evicted as soon as it was recorded,
/// and fetched again by every pull: once the room left is used up, only pictures in the window or
/// nearer than `reach` are fetched.
struct CacheRoom {
    /// The budget in bytes.
    let budget: Int64
    /// The window's pages past the reader, whose pictures are never evicted.
    let pagesAhead: Int
    let mode: PrefetchMode
    /// From the store at the start, plus what was recorded, minus what was evicted.
    var totals: CacheTotals
    /// How far from the reader the farthest cached picture outside the window is (lowered to the
    /// nearest evicted after an eviction). Learnt once the cache comes within a plan's worth of its
    /// budget (`--images all`); forgotten when the reader moves.
    var reach: Int?
    /// The last eviction left the cache over its budget: only the window's pictures are left, which
    /// are never evicted, so evicting again finds nothing until the reader moves (and each try lists
    /// every cached picture with its row).
    var onlyTheWindowLeft = false

    init(budget: Int64, pagesAhead: Int, mode: PrefetchMode, totals: CacheTotals) {
        self.budget = budget
        self.pagesAhead = pagesAhead
        self.mode = mode
        self.totals = totals
    }

    mutating func readerMoved() {
        reach = nil
        onlyTheWindowLeft = false
    }

    /// Evicts with `evict` when the cache is over its budget. An eviction that failed (nil) is
    /// tried again at the next plan.
    mutating func evictIfOver(
        around position: ReadingPosition,
        _ evict: (ReadingPosition) async -> CacheBudget.Eviction?
    ) async {
        guard totals.bytes > budget, !onlyTheWindowLeft, let evicted = await evict(position) else { return }
        totals = evicted.left  // the store's count, which a record that matched no row cannot skew
        if let nearest = evicted.nearest { reach = min(reach ?? .max, nearest) }
        if totals.bytes > budget {
            onlyTheWindowLeft = true
            reach = 0
        }
    }

    /// `planned` (nearest first) without the pictures past the room left that eviction would not
    /// make room for. Each takes the room of a picture of the cache's average size, as the
    /// `inFlight` pictures have; a plan holds at most `planSize`. `reach` is asked (from the
    /// store: `CacheBudget.reach`) once the cache comes within a plan's worth of its budget; nil
    /// when it could not be found.
    mutating func admit(
        _ planned: [PictureJob], around position: ReadingPosition, inFlight: Int,
        planSize: Int, reach findReach: (ReadingPosition) async -> Int?
    ) async -> [PictureJob] {
        let average = totals.average
        if mode == .all, reach == nil, totals.bytes + Int64(planSize) * average >= budget {
            reach = await findReach(position) ?? .max
        }
        guard let reach else { return planned }
        let window = PrefetchPlan.window(position, pagesAhead: pagesAhead)
        var room = budget - totals.bytes - Int64(inFlight) * average
        return planned.filter { job in
            defer { room -= average }
            return room >= max(average, 1) || window.contains(job.row)
                || PrefetchPlan.distance(ofRow: job.row, from: position) < reach
        }
    }
}
