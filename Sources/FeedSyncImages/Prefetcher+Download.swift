import FeedSyncStore
import FeedSyncTransport
import Foundation

extension PicturePrefetcher {
    /// Starts downloading one picture. When the transfer ends, the body is verified to be an image
    /// and written atomically on the `disk` queue, and the outcome is handed to `run`; `record`
    /// makes written pictures durable and marks them cached. Returns the transfer, to withdraw it
    /// while it waits.
    func startDownload(_ job: PictureJob) -> HTTPTransferHandle? {
        guard let request = request(for: job) else {
            ended(job, .failed("not an http(s) URL", permanent: true))
            return nil
        }
        return client.start(request, lane: lane) { [self] result in
            disk.async { [self] in ended(job, keep(result, for: job)) }
        }
    }

    /// Downloads `job` now, outside any plan (a row the reader is looking at), and checks, writes,
    /// flushes and records it as the prefetch does. Returns whether it is cached. One download per
    /// picture however many ask at once (a row's own picture that is also inside its article, asked
    /// for by the list and by the opened article together): the others wait for its outcome.
    public func fetchNow(_ job: PictureJob) async -> Bool {
        let other: Bool? = await withCheckedContinuation { continuation in
            let first = fetching.withLock { waiting in
                guard waiting[job.id] == nil else {
                    waiting[job.id]!.append(continuation)
                    return false
                }
                waiting[job.id] = []
                return true
            }
            if first { continuation.resume(returning: nil) }
        }
        if let other { return other }
        let cached = await downloadNow(job)
        for waiter in fetching.withLock({ $0.removeValue(forKey: job.id) ?? [] }) { waiter.resume(returning: cached) }
        return cached
    }

    private func downloadNow(_ job: PictureJob) async -> Bool {
        guard let request = request(for: job) else {
            await fail(job, "not an http(s) URL", permanent: true)
            return false
        }
        let outcome: DownloadOutcome = await withCheckedContinuation { continuation in
            client.start(request) { [self] result in
                disk.async { [self] in continuation.resume(returning: keep(result, for: job)) }
            }
        }
        switch outcome {
        case .written(let picture):
            // Recorded, then the cache brought back within its budget around the reader, as a
            // pull's prefetch does after its pictures.
            let recorded = await record([PrefetchMachine.WrittenPicture(job: job, picture: picture)]) == nil
            if recorded, let position = try? await store.latestReadingPosition() { await evict(around: position) }
            return recorded
        case .failed(let reason, let permanent):
            await fail(job, reason, permanent: permanent)
            return false
        case .cancelled:
            return false
        }
    }

    /// The request for a picture, nil when its URL is none this client fetches.
    func request(for job: PictureJob) -> HTTPRequest? {
        guard HTTPRequest.isFetchable(job.url) else { return nil }
        return HTTPRequest(url: job.url, headers: [("Accept", "image/*")], maxBodyBytes: options.maxBytes)
    }

    /// What a finished transfer leaves: a written picture, or why there is none.
    func keep(_ result: Result<HTTPResponse, TransportError>, for job: PictureJob) -> DownloadOutcome {
        let response: HTTPResponse
        switch result {
        case .success(let value): response = value
        case .failure(let error) where error.kind == .cancelled: return .cancelled
        case .failure(let error): return .failed(error.detail, permanent: !error.isTransient)
        }
        guard (200..<300).contains(response.status) else {
            return .failed("the server answered \(response.status)", permanent: !response.isTransientFailure)
        }
        guard let kind = ImageKind.sniff(response.body) else {
            let start = String(decoding: response.body.prefix(16), as: UTF8.self)
            return .failed(
                response.body.isEmpty ? "the body is empty" : "not an image (starts with \(String(reflecting: start)))",
                permanent: true)
        }
        guard ImageKind.dimensions(of: response.body, as: kind) != nil else {
            return .failed(
                "not a whole \(kind.rawValue.uppercased()) picture (its header gives no sane size)", permanent: true)
        }
        let name = PictureFiles.name(id: job.id, kind: kind)
        do {
            let staged = try files.stage(response.body, as: name)
            // The same picture fetched twice (for the page and by the pull): the later copy wins.
            staging.withLock { $0.updateValue(staged, forKey: job.id) }.map(files.discard)
        } catch {
            if error is PictureFiles.UnsafeFolder { onEvent(.localFault("\(error)")) }
            return .failed("cannot write the picture: \(error)", permanent: false)
        }
        return .written(DownloadedPicture(id: job.id, file: name, bytes: Int64(response.body.count), mime: kind.mime))
    }

    /// Places written pictures under their names, makes them durable with one filesystem flush
    /// and marks them cached in one transaction, all holding the folder's lock, so another
    /// process's eviction or sweep never sees a name placed and not recorded. Returns why it could
    /// not (its files are then removed), or nil. The file work runs on the `disk` queue.
    func record(_ batch: [PrefetchMachine.WrittenPicture]) async -> String? {
        let staged = staging.withLock { staging in batch.compactMap { staging.removeValue(forKey: $0.picture.id) } }
        do {
            try await files.exclusively {
                try await onDisk { [files] in
                    var placed: [PictureFiles.Staged] = []
                    do {
                        for picture in staged {
                            try files.place(picture)
                            placed.append(picture)
                        }
                        try files.sync()
                    } catch {
                        for picture in placed { files.remove(picture.name) }
                        throw error
                    }
                }
                do {
                    try await store.markPicturesCached(batch.map(\.picture))
                } catch {
                    for picture in staged { files.remove(picture.name) }
                    throw error
                }
            }
            return nil
        } catch {
            if error is PictureFiles.UnsafeFolder { onEvent(.localFault("\(error)")) }
            for picture in staged { files.discard(picture) }
            return "cannot write the picture: \(error)"
        }
    }

    /// Runs `body`, which blocks on the file system, on the `disk` queue.
    func onDisk(_ body: @escaping @Sendable () throws -> Void) async throws {
        try await withCheckedThrowingContinuation { (done: CheckedContinuation<Void, any Error>) in
            disk.async { done.resume(with: Result { try body() }) }
        }
    }

    /// Records the failure; the picture is not tried again before `PrefetchMachine.retryDelay`.
    func fail(_ job: PictureJob, _ reason: String, permanent: Bool) async {
        onEvent(.failed(url: job.url, reason: reason, feedID: job.place.feedID))
        await storing("record a failed picture") {
            let attempts = try await store.pictureAttempts(id: job.id)
            let delay = PrefetchMachine.retryDelay(permanent: permanent, attempts: attempts)
            try await store.markPictureFailed(
                id: job.id, error: reason, permanent: permanent, retryAt: Date().addingTimeInterval(delay))
        }
    }

    var budget: CacheBudget {
        CacheBudget(store: store, files: files, bytes: options.cacheBudget, pagesAhead: options.pagesAhead)
    }

    /// Evicts down to the budget around `position`, reporting what went; nil when the store failed.
    @discardableResult
    func evict(around position: ReadingPosition) async -> CacheBudget.Eviction? {
        guard let evicted = await storing("evict", { try await budget.enforce(around: position) }) else { return nil }
        if evicted.count > 0 { onEvent(.evicted(count: evicted.count, bytes: evicted.bytes)) }
        return evicted
    }
}
