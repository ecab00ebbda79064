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

    /// Evicts until the cache fits; returns how many pictures and bytes went.
    @discardableResult
    public func enforce(around position: ReadingPosition) throws(StoreError) -> (count: Int, bytes: Int64) {
        // One sum first: a cache within its budget (after most pulls) costs no list of every picture.
        guard try store.cachedBytes() > bytes else { return (0, 0) }
        let cached = try store.cachedPictures(feedURL: position.feedURL)
        var total = cached.reduce(Int64(0)) { $0 + $1.bytes }
        let window = PrefetchPlan.window(position, pagesAhead: pagesAhead)
        func distance(_ picture: CachedPicture) -> Int {
            picture.row.map { PrefetchPlan.distance(ofRow: $0, from: position) } ?? .max
        }
        let candidates = cached
            .filter { $0.row.map { !window.contains($0) } ?? true }
            .sorted { distance($0) > distance($1) }
        var count = 0
        var freed: Int64 = 0
        for picture in candidates where total > bytes {
            // The row first: a file without a row is swept by gc; a row without its file would lie.
            try store.uncachePicture(id: picture.id)
            files.remove(picture.file)
            total -= picture.bytes
            freed += picture.bytes
            count += 1
        }
        return (count, freed)
    }
}
