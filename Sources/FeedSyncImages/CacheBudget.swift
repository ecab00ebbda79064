import FeedSyncModel
import FeedSyncStore

/// Keeps the picture cache within its byte budget: the pictures farthest from the reading
/// position go first, and pictures inside the window never go. `PictureCache.evict` runs it.
struct CacheBudget: Sendable {
    let store: Store
    let folder: PictureFolder
    let bytes: Int64
    let pagesAhead: Int

    /// What an eviction took, and what it left.
    public struct Eviction: Sendable {
        public var count = 0
        public var bytes: Int64 = 0
        /// How far from the reader the nearest picture evicted was.
        public var nearest: Int?
        /// The cache afterwards: over the budget only if the window's pictures alone are.
        public var left: CacheTotals
    }

    /// Evicts until the cache fits. Call holding the picture folder's lock.
    func evict(around position: ReadingPosition) async throws(StoreError) -> Eviction {
        // One sum first: a cache within its budget (after most pulls) costs no list of every picture.
        let totals = try await store.cachedTotals()
        guard totals.bytes > bytes else { return Eviction(left: totals) }
        let cached = try await cachedPictures(around: position)
        var eviction = Eviction(left: CacheTotals(bytes: cached.reduce(0) { $0 + $1.bytes }, count: cached.count))
        for (picture, distance) in evictable(cached, around: position).sorted(by: { $0.distance > $1.distance })
        where eviction.left.bytes > bytes {
            // The row first: a file without a row is swept by gc; a row without its file would lie.
            try await store.uncachePicture(id: picture.id)
            folder.remove(picture.file)
            eviction.left.add(CacheTotals(bytes: -picture.bytes, count: -1))
            eviction.bytes += picture.bytes
            eviction.count += 1
            eviction.nearest = distance
        }
        return eviction
    }

    /// With the cache at its budget, how far from the reader a picture outside the window may be
    /// and still be worth fetching: nearer than the farthest cached picture eviction could take
    /// for it (0 when it could take none). One farther would be the first evicted.
    func reach(around position: ReadingPosition) async throws(StoreError) -> Int {
        evictable(try await cachedPictures(around: position), around: position).map(\.distance).max() ?? 0
    }

    /// Every cached picture, each at its row nearest the reader.
    func cachedPictures(around position: ReadingPosition) async throws(StoreError) -> [CachedPicture] {
        try await store.cachedPictures(
            feedURL: position.feedURL, page: position.rows,
            window: PrefetchPlan.window(position, pagesAhead: pagesAhead))
    }

    /// The cached pictures outside the window, each with its distance from the reader (a picture
    /// not in the reader's list is the farthest of all).
    func evictable(_ cached: [CachedPicture], around position: ReadingPosition) -> [(
        picture: CachedPicture, distance: Int
    )] {
        let window = PrefetchPlan.window(position, pagesAhead: pagesAhead)
        return cached.compactMap { picture in
            guard let row = picture.row else { return (picture, .max) }
            return window.contains(row) ? nil : (picture, PrefetchPlan.distance(ofRow: row, from: position))
        }
    }
}
