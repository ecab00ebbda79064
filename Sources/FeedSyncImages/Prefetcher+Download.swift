import FeedSyncModel
import FeedSyncStore
import FeedSyncTransport
import Foundation

extension PrefetchRun {
    /// Starts downloading one picture; when the transfer ends, its result goes to `run`, which
    /// hands the body to the cache. Returns the transfer, to withdraw it while it waits.
    func startDownload(_ job: PictureJob) -> HTTPTransferHandle? {
        guard let request = prefetcher.request(for: job, maxBytes: options.maxBytes) else {
            sink(.machine(.ended(id: job.id, .failed("not an http(s) URL", permanent: true))))
            return nil
        }
        return client.start(request, lane: lane) { [self] result in sink(.downloaded(job, result)) }
    }

    /// What a finished transfer leaves: a written picture, or why there is none.
    func keep(_ result: Result<HTTPResponse, TransportError>, for job: PictureJob) -> (
        DownloadOutcome, PictureCache.Written?
    ) {
        prefetcher.keep(result, for: job, onEvent: onEvent)
    }

    /// Has the cache name and record a batch; returns why it could not (its files are then gone), or nil.
    func record(_ batch: [PictureCache.Written]) async -> String? {
        await prefetcher.record(batch, onEvent: onEvent)
    }

    /// Records the failure; the picture is not tried again before `PrefetchMachine.retryDelay`.
    func fail(_ job: PictureJob, _ reason: String, permanent: Bool) async {
        await prefetcher.fail(job, reason, permanent: permanent, onEvent: onEvent)
    }

    /// Evicts down to the budget around `position`, reporting what went; nil when the store failed.
    @discardableResult
    func evict(around position: ReadingPosition) async -> CacheBudget.Eviction? {
        await prefetcher.evict(around: position, options: options, onEvent: onEvent)
    }
}

extension PicturePrefetcher {
    /// Downloads `job` now, outside any plan (a row the reader is looking at), and has the cache
    /// check, write and record it as a pull's would, then bring the cache back within its budget
    /// around the reader. Returns whether it is cached. One download per picture however many ask
    /// at once (a row's own picture that is also inside its article, asked for by the list and by
    /// the opened article together): the others wait for its outcome.
    public func fetchNow(_ job: PictureJob, options: PrefetchOptions) async -> Bool {
        if let other = await joinFetch(job.id) { return other }
        let cached = await downloadNow(job, options: options)
        finishFetch(job.id, cached: cached)
        return cached
    }

    private func downloadNow(_ job: PictureJob, options: PrefetchOptions) async -> Bool {
        var (client, onEvent) = channel()
        guard let request = request(for: job, maxBytes: options.maxBytes) else {
            await fail(job, "not an http(s) URL", permanent: true, onEvent: onEvent)
            return false
        }
        func download() async -> Result<HTTPResponse, TransportError> {
            await withCheckedContinuation { continuation in
                client.start(request) { continuation.resume(returning: $0) }
            }
        }
        var result = await download()
        // Only a client's shutdown ends this transfer as cancelled: the pull whose client it was
        // ended meanwhile (its run had gone by then). Asked once more, through our own client.
        if case .failure(let error) = result, error.kind == .cancelled {
            (client, onEvent) = channel()
            result = await download()
        }
        switch keep(result, for: job, onEvent: onEvent) {
        case (_, let written?):
            guard await record([written], onEvent: onEvent) == nil else { return false }
            if let position = try? await store.latestReadingPosition() {
                await evict(around: position, options: options, onEvent: onEvent)
            }
            return true
        case (.failed(let reason, let permanent), nil):
            await fail(job, reason, permanent: permanent, onEvent: onEvent)
            return false
        default:
            return false
        }
    }

    /// The request for a picture, nil when its URL is none this client fetches.
    func request(for job: PictureJob, maxBytes: Int) -> HTTPRequest? {
        guard HTTPRequest.isFetchable(job.url) else { return nil }
        return HTTPRequest(url: job.url, headers: [("Accept", "image/*")], maxBodyBytes: maxBytes)
    }

    /// What a finished transfer leaves: a picture the cache checked and wrote, or why there is none.
    func keep(
        _ result: Result<HTTPResponse, TransportError>, for job: PictureJob,
        onEvent: @Sendable (PictureEvent) -> Void
    ) -> (DownloadOutcome, PictureCache.Written?) {
        let response: HTTPResponse
        switch result {
        case .success(let value): response = value
        case .failure(let error) where error.kind == .cancelled: return (.cancelled, nil)
        case .failure(let error): return (.failed(error.detail, permanent: !error.isTransient), nil)
        }
        guard (200..<300).contains(response.status) else {
            return (.failed("the server answered \(response.status)", permanent: !response.isTransientFailure), nil)
        }
        switch cache.accept(response.body, for: job.id) {
        case .success(let written):
            return (.written(written.picture), written)
        case .failure(let refusal):
            if let fault = refusal.localFault { onEvent(.localFault(fault)) }
            return (.failed(refusal.reason, permanent: refusal.permanent), nil)
        }
    }

    /// Has the cache name and record `batch`; returns why it could not, or nil.
    func record(_ batch: [PictureCache.Written], onEvent: @Sendable (PictureEvent) -> Void) async -> String? {
        do {
            try await cache.record(batch)
            return nil
        } catch {
            if error is PictureFolder.UnsafeFolder { onEvent(.localFault("\(error)")) }
            return "cannot write the picture: \((error as? StoreError)?.message ?? "\(error)")"
        }
    }

    /// Records the failure; the picture is not tried again before `PrefetchMachine.retryDelay`.
    func fail(_ job: PictureJob, _ reason: String, permanent: Bool, onEvent: @Sendable (PictureEvent) -> Void) async {
        onEvent(.failed(url: job.url, reason: reason, feedID: job.place.feedID))
        await storing("record a failed picture", onEvent: onEvent) {
            let attempts = try await store.pictureAttempts(id: job.id)
            let delay = PrefetchMachine.retryDelay(permanent: permanent, attempts: attempts)
            try await store.markPictureFailed(
                id: job.id, error: reason, permanent: permanent, retryAt: store.clock.now().addingTimeInterval(delay))
        }
    }

    /// Evicts down to the budget around `position`, reporting what went; nil when the store failed.
    @discardableResult
    func evict(around position: ReadingPosition, options: PrefetchOptions, onEvent: @Sendable (PictureEvent) -> Void)
        async -> CacheBudget.Eviction?
    {
        guard
            let evicted = await storing(
                "evict", onEvent: onEvent,
                {
                    try await cache.evict(budget: options.cacheBudget, pagesAhead: options.pagesAhead, around: position)
                })
        else { return nil }
        if evicted.count > 0 { onEvent(.evicted(count: evicted.count, bytes: evicted.bytes)) }
        return evicted
    }

    /// Runs a store call for `task`; a failure is reported (the pull exits 74) and gives nil.
    @discardableResult
    func storing<T>(_ task: String, onEvent: @Sendable (PictureEvent) -> Void, _ body: () async throws -> T) async -> T?
    {
        do {
            return try await body()
        } catch {
            let reason = (error as? StoreError)?.message ?? "\(error)"
            onEvent(.localFault("cannot \(task) while prefetching pictures: \(reason)"))
            return nil
        }
    }
}
