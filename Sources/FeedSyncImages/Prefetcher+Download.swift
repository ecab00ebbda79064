import FeedSyncStore
import FeedSyncTransport
import Foundation

/// How one picture's download ended.
enum DownloadOutcome: Sendable {
    case written(DownloadedPicture)
    case failed(String, permanent: Bool)
    /// Withdrawn before it started (the reader moved on), or cut off by shutdown: nothing to record.
    case cancelled
}

extension PicturePrefetcher {
    /// A missing or unusable picture is not asked for again for this long.
    static let permanentRetry: TimeInterval = 3 * 86_400

    /// Transient failures back off from a minute, doubling, up to a day.
    static func transientRetry(afterAttempts attempts: Int) -> TimeInterval {
        min(86_400, 60 * pow(2, Double(min(attempts, 20))))
    }

    /// Starts downloading one picture. When the transfer ends, on the client's thread, the body is
    /// verified to be an image and written atomically, and the outcome is handed to `run`;
    /// `record` makes written pictures durable and marks them cached. Returns the transfer, to
    /// withdraw it while it waits.
    func startDownload(_ job: PictureJob) -> HTTPTransferHandle? {
        guard HTTPRequest.isFetchable(job.url) else {
            finished(job, .failed("not an http(s) URL", permanent: true))
            return nil
        }
        let request = HTTPRequest(url: job.url, headers: [("Accept", "image/*")], maxBodyBytes: options.maxBytes)
        return client.start(request, lane: lane) { [self] result in finished(job, keep(result, for: job)) }
    }

    /// What a finished transfer leaves: a written picture, or why there is none.
    func keep(_ result: Result<HTTPResponse, TransportError>, for job: PictureJob) -> DownloadOutcome {
        let response: HTTPResponse
        switch result {
        case .success(let value): response = value
        case .failure(let error) where error.kind == .cancelled: return .cancelled
        case .failure(let error): return .failed(error.detail, permanent: !error.isTransient)
        }
        switch response.status {
        case 200..<300:
            break
        case 408, 425, 429, 500...599:
            return .failed("the server answered \(response.status)", permanent: false)
        default:
            return .failed("the server answered \(response.status)", permanent: true)
        }
        guard let kind = ImageKind.sniff(response.body) else {
            let start = String(decoding: response.body.prefix(16), as: UTF8.self)
            return .failed(response.body.isEmpty ? "the body is empty" : "not an image (starts with \(String(reflecting: start)))", permanent: true)
        }
        guard ImageKind.dimensions(of: response.body, as: kind) != nil else {
            return .failed("not a whole \(kind.rawValue.uppercased()) picture (its header gives no sane size)", permanent: true)
        }
        let name = PictureFiles.name(id: job.id, kind: kind)
        do {
            try files.write(response.body, as: name)
        } catch {
            if error is PictureFiles.UnsafeFolder { onEvent(.localFault("\(error)")) }
            return .failed("cannot write the picture: \(error)", permanent: false)
        }
        return .written(DownloadedPicture(id: job.id, file: name, bytes: Int64(response.body.count), mime: kind.mime))
    }

    /// Makes written pictures durable with one filesystem flush, then marks them cached in one
    /// transaction. Returns what it cached.
    func record(_ batch: [(job: PictureJob, picture: DownloadedPicture)]) -> CacheTotals {
        do {
            try files.sync()
            try store.markPicturesCached(batch.map(\.picture))
        } catch {
            if error is PictureFiles.UnsafeFolder { onEvent(.localFault("\(error)")) }
            for (job, picture) in batch {
                files.remove(picture.file)
                fail(job, "cannot write the picture: \(error)", permanent: false)
            }
            return CacheTotals()
        }
        for (job, picture) in batch { onEvent(.cached(url: job.url, bytes: Int(picture.bytes))) }
        return CacheTotals(bytes: batch.reduce(0) { $0 + $1.picture.bytes }, count: batch.count)
    }

    /// Records the failure.
    func fail(_ job: PictureJob, _ reason: String, permanent: Bool) {
        let attempts = (try? store.pictureAttempts(id: job.id)) ?? 0
        let delay = permanent ? Self.permanentRetry : Self.transientRetry(afterAttempts: attempts)
        try? store.markPictureFailed(id: job.id, error: reason, permanent: permanent, retryAt: Date().addingTimeInterval(delay))
        onEvent(.failed(url: job.url, reason: reason))
    }

    var budget: CacheBudget {
        CacheBudget(store: store, files: files, bytes: options.cacheBudget, pagesAhead: options.pagesAhead)
    }

    /// Evicts down to the budget around `position`, reporting what went; nil when the store failed.
    @discardableResult
    func evict(around position: ReadingPosition) -> CacheBudget.Eviction? {
        guard let evicted = try? budget.enforce(around: position) else { return nil }
        if evicted.count > 0 { onEvent(.evicted(count: evicted.count, bytes: evicted.bytes)) }
        return evicted
    }
}
