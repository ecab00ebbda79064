import FeedSyncModel
import FeedSyncStore
import FeedSyncTransport
import Foundation
import Synchronization

/// The picture prefetch of a process: one for its life (`FeedSync`'s), whatever pulls it runs
/// and whatever the reading page asks. It plans and downloads; the bytes go to the `PictureCache`,
/// which checks, writes and records them.
///
/// A pull hands it its client for the pull's length (`begin`): the pictures share the pull's
/// connections and per-host limit, and a `Run` downloads for the rows the reader will see next
/// while the pull is paging. A picture the page asks for now (`fetchNow`) goes through the same
/// client while a pull runs, through one of the prefetcher's own otherwise.
public final class PicturePrefetcher: Sendable {
    let store: Store
    let cache: PictureCache
    /// The client `fetchNow` uses while no pull runs, made on first use.
    let idleConfiguration: TransportConfiguration
    private let shared = Mutex(Shared())

    struct Shared {
        /// The pull running in this process, if any.
        var run: PrefetchRun?
        var idleClient: HTTPClient?
        /// `fetchNow` calls waiting for the download of a picture another call started, by picture.
        var fetching: [Int64: [CheckedContinuation<Bool?, Never>]] = [:]
    }

    public init(cache: PictureCache, idleClient: TransportConfiguration) {
        store = cache.store
        self.cache = cache
        idleConfiguration = idleClient
    }

    deinit { shared.withLock { $0.idleClient?.shutdown() } }

    /// A pull's run, using `client` until `run` returns; with `--images none` it downloads nothing.
    public func begin(
        client: HTTPClient, options: PrefetchOptions, onEvent: @escaping @Sendable (PictureEvent) -> Void = { _ in }
    ) -> PrefetchRun {
        let run = PrefetchRun(prefetcher: self, client: client, options: options, onEvent: onEvent)
        shared.withLock { $0.run = run }
        return run
    }

    fileprivate func ended(_ run: PrefetchRun) {
        shared.withLock { if $0.run === run { $0.run = nil } }
    }

    /// The client, lane and events of a picture asked for now: the running pull's, else our own.
    func channel() -> (client: HTTPClient, onEvent: @Sendable (PictureEvent) -> Void) {
        shared.withLock { shared in
            if let run = shared.run { return (run.client, run.onEvent) }
            if shared.idleClient == nil { shared.idleClient = HTTPClient(configuration: idleConfiguration) }
            return (shared.idleClient!, { _ in })
        }
    }

    /// One download per picture however many ask at once: true for the first asker; the others
    /// wait here for its outcome (`finishFetch`).
    func joinFetch(_ id: Int64) async -> Bool? {
        await withCheckedContinuation { continuation in
            let first = shared.withLock { shared in
                guard shared.fetching[id] == nil else {
                    shared.fetching[id]!.append(continuation)
                    return false
                }
                shared.fetching[id] = []
                return true
            }
            if first { continuation.resume(returning: nil) }
        }
    }

    func finishFetch(_ id: Int64, cached: Bool) {
        for waiter in shared.withLock({ $0.fetching.removeValue(forKey: id) ?? [] }) {
            waiter.resume(returning: cached)
        }
    }
}

/// Downloads pictures for the rows the reader will see next while a pull is paging.
///
/// It plans from the store: the reading position `list` recorded, the rows of the window, the
/// pictures there that are due (with `--images all`, only the nearest few hundred of them). When to
/// plan, what to start, take back, record and when to stop is `PrefetchMachine`'s to decide; `run`
/// carries it out on its task: store reads, the checks and writes of each finished download (the
/// cache's `accept`), the start of transfers on the client; each batch's record runs as a child
/// task. A reader who moves is followed within about a second: queued downloads outside the new
/// window are dropped, and so are those still waiting in the client's lane; downloads already
/// running finish.
public final class PrefetchRun: Sendable {
    let prefetcher: PicturePrefetcher
    var store: Store { prefetcher.store }
    var cache: PictureCache { prefetcher.cache }
    let client: HTTPClient
    let options: PrefetchOptions
    let onEvent: @Sendable (PictureEvent) -> Void
    /// Downloads run `concurrency` at a time in the lane; as many more wait there, so a
    /// connection that finishes starts the next one without waiting for `run`.
    let lane: HTTPLane
    private let events: AsyncStream<Signal>
    private let signals: AsyncStream<Signal>.Continuation

    /// What reaches `run`: the machine's events, and each download as its transfer ends (on the
    /// client's thread), to be checked and written on `run`'s task.
    enum Signal: Sendable {
        case machine(PrefetchMachine.Event)
        case downloaded(PictureJob, Result<HTTPResponse, TransportError>)
    }

    /// With `--images all`, the most jobs one plan holds (at least four per transfer at once).
    static let planLimit = 256

    /// With `--images all`, where a plan starts reading below the reader: where the last plan found
    /// the first due row (or the list's end). The rows between held nothing due then, and within a
    /// run only two things make one due: a page landing among them (it moves the place to another
    /// row, and the store then reads from the reader) and a page refreshing items already stored
    /// (the machine's `forgetStart`). A backoff that runs out is picked up by a full plan every
    /// `rescan`.
    struct PlanStart {
        var mark: PlaceAtRow
        var position: ReadingPosition
        /// When it was first kept.
        var since: Date
    }

    static let rescan: TimeInterval = 30

    /// In window mode, the due pictures of the first page of each feed never listed on its own, as
    /// found at `since`: a plan follows every committed page, and reading them for a thousand feeds
    /// each time would cost more than the plan. Read again every `rescan`, for another page size,
    /// and once paging has finished; pictures this run already tried are left out of each plan.
    struct FirstPages {
        var jobs: [PictureJob]
        var perPage: Int
        var since: Date
    }

    fileprivate init(
        prefetcher: PicturePrefetcher, client: HTTPClient, options: PrefetchOptions,
        onEvent: @escaping @Sendable (PictureEvent) -> Void
    ) {
        self.prefetcher = prefetcher
        self.client = client
        self.options = options
        self.onEvent = onEvent
        lane = HTTPLane(limit: options.concurrency)
        (events, signals) = AsyncStream.makeStream()
    }

    /// A page was committed: there may be new pictures in the window. `refreshing`: it rewrote
    /// items already stored, whose pictures may have changed anywhere in the list.
    public func pagesChanged(refreshing: Bool = true) {
        signal(.pagesCommitted(refreshing: refreshing))
    }

    /// Paging is over: `run` returns once nothing due is left.
    public func pagingFinished() {
        signal(.pagingFinished)
    }

    /// Hands `event` to `run`; with `--images none` it does not run, and nothing is kept for it.
    private func signal(_ event: PrefetchMachine.Event) {
        if options.mode != .none { sink(.machine(event)) }
    }

    /// Hands `signal` to `run` (from any thread).
    func sink(_ signal: Signal) { signals.yield(signal) }

    /// Runs until paging has finished and the window holds nothing due (or the client is shut down:
    /// what was cut off stays due, not failed), then enforces the budget. Call it once.
    public func run() async {
        defer { prefetcher.ended(self) }
        guard options.mode != .none else { return }
        var machine = PrefetchMachine(concurrency: options.concurrency, now: Date())
        var room = CacheRoom(
            budget: options.cacheBudget, pagesAhead: options.pagesAhead, mode: options.mode,
            totals: await storing("sum the cache", { try await store.cachedTotals() }) ?? CacheTotals())
        var handles: [Int64: HTTPTransferHandle] = [:]  // to take back downloads still waiting
        var planStart: PlanStart?
        var articleStart: PlanStart?
        var firstPages: FirstPages?
        var recording = CacheTotals()
        var written: [Int64: PictureCache.Written] = [:]  // checked, written, not yet recorded
        await withDiscardingTaskGroup { group in
            group.addTask { [self] in
                while (try? await Task.sleep(nanoseconds: UInt64(PrefetchMachine.tick * 1e9))) != nil {
                    sink(.machine(.tick))
                }
            }
            var actions = machine.handle(.tick, now: Date())
            var iterator = events.makeAsyncIterator()
            while true {
                while !actions.isEmpty {
                    switch actions.removeFirst() {
                    case .plan(let inFlight, let forgetStart):
                        if forgetStart { planStart = nil }
                        actions += machine.handle(.positioned(await currentPosition(), inFlight: inFlight), now: Date())
                    case .prepare(let position, let readerMoved, let inFlight):
                        if readerMoved { room.readerMoved() }
                        await room.evictIfOver(around: position) { await evict(around: $0) }
                        let wanted = await plan(
                            position, inFlight: inFlight, start: &planStart, articleStart: &articleStart,
                            firstPages: &firstPages)
                        actions += machine.handle(
                            .found(position: position, wanted: wanted, inFlight: inFlight), now: Date())
                    case .admit(let position, let untried, let wanted, let inFlight):
                        let admitted = await room.admit(
                            untried, around: position, inFlight: inFlight, planSize: planSize(inFlight: inFlight)
                        ) { position in
                            await storing("measure the cache") {
                                try await cache.reach(
                                    budget: options.cacheBudget, pagesAhead: options.pagesAhead, around: position)
                            }
                        }
                        actions += machine.handle(
                            .planned(position: position, wanted: wanted, admitted: admitted),
                            now: Date())
                    case .start(let jobs):
                        for job in jobs { handles[job.id] = startDownload(job) }
                    case .withdraw(let ids):
                        for id in ids { handles[id].map(client.withdraw) }
                    case .record(let batch):
                        recording = CacheTotals(bytes: batch.reduce(0) { $0 + $1.picture.bytes }, count: batch.count)
                        let files = batch.compactMap { written.removeValue(forKey: $0.picture.id) }
                        group.addTask { [self] in sink(.machine(.recorded(failure: await record(files)))) }
                    case .fail(let job, let reason, let permanent):
                        await fail(job, reason, permanent: permanent)
                    case .report(let event):
                        onEvent(event)
                    case .finish(let position):
                        if let position { await evict(around: position) }
                        group.cancelAll()  // the tick
                        return
                    }
                }
                let event: PrefetchMachine.Event
                switch await iterator.next() {
                case nil: return
                case .machine(let next): event = next
                case .downloaded(let job, let result):
                    let (outcome, file) = keep(result, for: job)
                    written[job.id] = file
                    event = .ended(id: job.id, outcome)
                }
                switch event {
                case .ended(let id, _): handles[id] = nil
                case .recorded(nil): room.totals.add(recording)
                case .pagingFinished: firstPages = nil  // the last pages may have brought new feeds'
                default: break
                }
                actions = machine.handle(event, now: Date())
            }
        }
    }

    /// Runs a store call for `task`; a failure is reported (the pull exits 74) and gives nil.
    func storing<T>(_ task: String, _ body: () async throws -> T) async -> T? {
        await prefetcher.storing(task, onEvent: onEvent, body)
    }

    func currentPosition() async -> ReadingPosition {
        await storing("read the reading position", { try await store.latestReadingPosition() }).flatMap { $0 }
            ?? .start
    }

    /// With `--images all`, how many jobs a plan holds: `planLimit` (at least four per transfer at
    /// once) beyond the `inFlight` pictures still due while they download and record.
    func planSize(inFlight: Int) -> Int {
        max(Self.planLimit, 4 * options.concurrency) + inFlight
    }

    /// Due pictures in the window, nearest first; for `all`, the `planLimit` nearest of the whole
    /// list that are not among the `inFlight` pictures still due while they download and record.
    /// Only that many due rows are read on either side of the reading page, however long the list
    /// (a plan is made after every committed page). Below the reader SQLite starts at `start`, so
    /// it does not step again over the cached rows the last plan stepped over; above, it does.
    ///
    /// The pictures inside the window's articles follow the window's own pictures, nearest rows first.
    func plan(
        _ position: ReadingPosition, inFlight: Int, start: inout PlanStart?, articleStart: inout PlanStart?,
        firstPages: inout FirstPages?
    ) async -> [PictureJob] {
        let window = PrefetchPlan.window(position, pagesAhead: options.pagesAhead)
        // The window's article pictures from the first row that had any due at the last plan.
        if let kept = articleStart, kept.position != position || Date().timeIntervalSince(kept.since) >= Self.rescan {
            articleStart = nil
        }
        let articles =
            options.articlePictures == .none
            ? []
            : await storing(
                "plan",
                { [articleStart] in
                    try await store.dueArticlePictures(
                        feedURL: position.feedURL, rows: window, resuming: articleStart?.mark,
                        limit: planSize(inFlight: inFlight))
                }) ?? []
        if let first = articles.min(by: { $0.row < $1.row }) {
            articleStart = PlanStart(
                mark: PlaceAtRow(place: first.place, row: first.row), position: position,
                since: articleStart?.since ?? Date())
        }
        guard options.mode == .all else {
            let due =
                await storing("plan", { try await store.duePictures(feedURL: position.feedURL, rows: window) }) ?? []
            // A feed never shown on its own gets its first page too, last: a feed just added has
            // its pictures when the reader first opens it, though its items may sit far from the
            // reader in the list being read. Far from the reader they are, and admitted only while
            // the cache has room.
            if let kept = firstPages,
                kept.perPage != position.perPage || Date().timeIntervalSince(kept.since) >= Self.rescan
            {
                firstPages = nil
            }
            if firstPages == nil {
                let jobs = await storing(
                    "plan", { try await store.duePicturesOfUnviewedFeeds(perPage: position.perPage) })
                firstPages = FirstPages(jobs: jobs ?? [], perPage: position.perPage, since: Date())
            }
            var seen = Set(due.map(\.id))
            let inside = articles.filter { seen.insert($0.id).inserted }
            let far = (firstPages?.jobs ?? []).filter { seen.insert($0.id).inserted }
                .map { PictureJob(id: $0.id, url: $0.url, row: PrefetchPlan.far, place: $0.place) }
            return PrefetchPlan.order(due, from: position) + PrefetchPlan.order(inside, from: position) + far
        }
        let limit = planSize(inFlight: inFlight)
        let top = position.rows.lowerBound
        if let kept = start, kept.position != position || Date().timeIntervalSince(kept.since) >= Self.rescan {
            start = nil
        }
        let mark = start?.mark
        let (below, end) =
            await storing(
                "plan",
                {
                    try await store.duePictures(feedURL: position.feedURL, from: top, resuming: mark, limit: limit)
                }) ?? ([], nil)
        if let mark = below.first.map({ PlaceAtRow(place: $0.place, row: $0.row) }) ?? end {
            start = PlanStart(mark: mark, position: position, since: start?.since ?? Date())
        }
        let above =
            await storing(
                "plan",
                {
                    try await store.duePictures(
                        feedURL: position.feedURL, rows: 0..<top, limit: limit, backwards: true)
                }) ?? []
        var seen = Set<Int64>()
        let thumbnails = PrefetchPlan.order(below + above, from: position).filter { seen.insert($0.id).inserted }
        let inside = PrefetchPlan.order(articles.filter { seen.insert($0.id).inserted }, from: position)
        // The articles' pictures right after the last of the window's own.
        let cut = thumbnails.lastIndex { window.contains($0.row) }.map { $0 + 1 } ?? 0
        var jobs = Array((thumbnails[..<cut] + inside + thumbnails[cut...]).prefix(limit))
        // Every row of every feed: the reader reads one feed's list, the others' pictures follow
        // once it has all its own, feed by feed.
        if let feedURL = position.feedURL, jobs.count < limit {
            let others =
                await storing(
                    "plan",
                    {
                        try await store.duePictures(outside: feedURL, far: PrefetchPlan.far, limit: limit - jobs.count)
                    }) ?? []
            jobs += others.filter { seen.insert($0.id).inserted }
        }
        return jobs
    }
}
