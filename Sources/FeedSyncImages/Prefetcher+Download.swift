import FeedSyncStore
import FeedSyncTransport
import Foundation

extension PicturePrefetcher {
    /// A missing or unusable picture is not asked for again for this long.
    static let permanentRetry: TimeInterval = 3 * 86_400

    /// Transient failures back off from a minute, doubling, up to a day.
    static func transientRetry(afterAttempts attempts: Int) -> TimeInterval {
        min(86_400, 60 * pow(2, Double(min(attempts, 20))))
    }

    /// Downloads one picture, verifies it is an image, writes it atomically, then marks it cached.
    /// Returns the bytes cached, 0 when it failed.
    func download(_ job: PictureJob) async -> Int {
        guard HTTPRequest.isFetchable(job.url) else {
            return fail(job, "not an http(s) URL", permanent: true)
        }
        let response: HTTPResponse
        do {
            response = try await client.get(HTTPRequest(
                url: job.url, headers: [("Accept", "image/*")], maxBodyBytes: options.maxBytes))
        } catch {
            return fail(job, error.detail, permanent: !error.isTransient)
        }
        switch response.status {
        case 200..<300:
            break
        case 408, 425, 429, 500...599:
            return fail(job, "the server answered \(response.status)", permanent: false)
        default:
            return fail(job, "the server answered \(response.status)", permanent: true)
        }
        guard let kind = ImageKind.sniff(response.body) else {
            let start = String(decoding: response.body.prefix(16), as: UTF8.self)
            return fail(job, response.body.isEmpty ? "the body is empty" : "not an image (starts with \(String(reflecting: start)))", permanent: true)
        }
        let name = PictureFiles.name(id: job.id, kind: kind)
        do {
            try files.write(response.body, as: name)
            try store.markPictureCached(id: job.id, file: name, bytes: Int64(response.body.count), mime: kind.mime)
            onEvent(.cached(url: job.url, bytes: response.body.count))
            return response.body.count
        } catch {
            return fail(job, "cannot write the picture: \(error)", permanent: false)
        }
    }

    /// Records the failure; returns 0, the bytes cached.
    func fail(_ job: PictureJob, _ reason: String, permanent: Bool) -> Int {
        let attempts = (try? store.pictureAttempts(id: job.id)) ?? 0
        let delay = permanent ? Self.permanentRetry : Self.transientRetry(afterAttempts: attempts)
        try? store.markPictureFailed(id: job.id, error: reason, permanent: permanent, retryAt: Date().addingTimeInterval(delay))
        onEvent(.failed(url: job.url, reason: reason))
        return 0
    }

    /// Evicts the pictures farthest from the reading position until the cache fits its budget.
    /// Pictures inside the window are never evicted.
    @discardableResult
    public func enforceBudget(around position: ReadingPosition) throws(StoreError) -> (count: Int, bytes: Int64) {
        let cached = try store.cachedPictures(feedURL: position.feedURL)
        var total = cached.reduce(Int64(0)) { $0 + $1.bytes }
        guard total > options.cacheBudget else { return (0, 0) }
        let window = PrefetchPlan.window(position, pagesAhead: options.pagesAhead)
        let candidates = cached
            .filter { $0.row.map { !window.contains($0) } ?? true }
            .sorted { ($0.row.map { PrefetchPlan.distance(ofRow: $0, from: position) } ?? .max)
                    > ($1.row.map { PrefetchPlan.distance(ofRow: $0, from: position) } ?? .max) }
        var count = 0
        var freed: Int64 = 0
        for picture in candidates where total > options.cacheBudget {
            // The row first: a file without a row is swept by gc; a row without its file would lie.
            try store.uncachePicture(id: picture.id)
            files.remove(picture.file)
            total -= picture.bytes
            freed += picture.bytes
            count += 1
        }
        if count > 0 { onEvent(.evicted(count: count, bytes: freed)) }
        return (count, freed)
    }
}
