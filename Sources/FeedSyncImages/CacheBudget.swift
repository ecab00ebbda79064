import FeedSyncStore

/// Keeps the picture cache within its byte budget: the pictures farthest from the reading
/// position go first, and pictures inside the window never go.
public struct CacheBudget: Sendable {
    let store: Store
    let files: PictureFiles
    public let bytes: Int64
    public let pagesAhead: Int

    public init(store: Store, files: PictureFiles, bytes: Int64, pagesAhead: Int) {
        self.store = store
        self.files = files
        self.bytes = bytes
        self.pagesAhead = pagesAhead
    }

    /// Evicts until the cache fits; returns how many pictures and bytes went, and how far from the
    /// reader the nearest of them was.
    @discardableResult
    public func enforce(around position: ReadingPosition) throws(StoreError) -> (count: Int, bytes: Int64, nearest: Int?) {
        // One sum first: a cache within its budget (after most pulls) costs no list of every picture.
        guard try store.cachedTotals().bytes > bytes else { return (0, 0, nil) }
        let cached = try cachedPictures(around: position)
        var total = cached.reduce(Int64(0)) { $0 + $1.bytes }
        let candidates = evictable(cached, around: position).sorted { $0.distance > $1.distance }
        var count = 0
        var freed: Int64 = 0
        var nearest: Int?
        for (picture, distance) in candidates where total > bytes {
            // The row first: a file without a row is swept by gc; a row without its file would lie.
            try store.uncachePicture(id: picture.id)
            files.remove(picture.file)
            total -= picture.bytes
            freed += picture.bytes
            count += 1
            nearest = distance
        }
        return (count, freed, nearest)
    }

    /// With the cache at its budget, how far from the reader a picture outside the window may be
    /// and still be worth fetching: nearer than the farthest cached picture eviction could take
    /// for it (0 when it could take none). One farther would be the first evicted.
    public func reach(around position: ReadingPosition) throws(StoreError) -> Int {
        evictable(try cachedPictures(around: position), around: position).map(\.distance).max() ?? 0
    }

    /// Every cached picture, each at its row nearest the reader.
    func cachedPictures(around position: ReadingPosition) throws(StoreError) -> [CachedPicture] {
        let page = (position.page - 1) * position.perPage
        return try store.cachedPictures(feedURL: position.feedURL, page: page..<page + position.perPage,
                                        window: PrefetchPlan.window(position, pagesAhead: pagesAhead))
    }

    /// The cached pictures outside the window, each with its distance from the reader (a picture
    /// not in the reader's list is the farthest of all).
    func evictable(_ cached: [CachedPicture], around position: ReadingPosition) -> [(picture: CachedPicture, distance: Int)] {
        let window = PrefetchPlan.window(position, pagesAhead: pagesAhead)
        return cached.compactMap { picture in
            guard let row = picture.row else { return (picture, .max) }
            return window.contains(row) ? nil : (picture, PrefetchPlan.distance(ofRow: row, from: position))
        }
    }
}
