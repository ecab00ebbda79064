import FeedSyncStore
import FeedSyncTransport
import Foundation
import Synchronization

/// Downloads pictures for the rows the reader will see next while a pull is paging.
///
/// It plans from the store: the reading position `list` recorded, the rows of the window, the
/// pictures there that are due (with `--images all`, only the nearest few hundred of them). It
/// plans again when a page is committed (at most ten times a second while its queue is full), when
/// the queue runs dry, and at least every half second, so a reader who moves is followed within
/// about a second: queued downloads outside the new window are dropped, never started, and so are
/// those still waiting in the client's lane. Downloads already running finish.
public final class PicturePrefetcher: Sendable {
    let store: Store
    let client: HTTPClient
    let files: PictureFiles
    let options: PrefetchOptions
    let onEvent: @Sendable (PictureEvent) -> Void
    /// Downloads run `concurrency` at a time in the lane; as many more wait there, so a
    /// connection that finishes starts the next one without waiting for `run`.
    let lane: HTTPLane
    private let signals = Mutex(Signals())

    /// What happened since `run` last looked; everything but `pagingFinished` is taken by it.
    struct Signals {
        var pagesChanged = true
        /// A committed page rewrote items already stored: a picture may be due anywhere.
        var itemsRefreshed = false
        var pagingFinished = false
        /// Downloads that ended.
        var ended: [(job: PictureJob, outcome: DownloadOutcome)] = []
        /// Downloads handed to the client that have not ended.
        var downloading = 0
        /// What the record that finished cached.
        var recorded: CacheTotals?
        var ticked = false
        /// `run` waiting for the next signal.
        var waiter: CheckedContinuation<Void, Never>?

        var isEmpty: Bool { !pagesChanged && ended.isEmpty && recorded == nil && !ticked }
    }

    /// Written pictures are made durable and recorded together: at this many, when nothing else
    /// is downloading, and at least every quarter second. (32 made P1 flush and commit 93 times
    /// instead of 24; the quarter second bounds what a killed pull downloads again.)
    static let batch = 128

    /// With `--images all`, the most jobs one plan holds (at least four per transfer at once).
    static let planLimit = 256

    /// With `--images all`, where a plan starts reading below the reader: where the last plan found
    /// the first due row (or the list's end). The rows between held nothing due then, and within a
    /// run only two things make one due: a page landing among them (it moves the place to another
    /// row, and the store then reads from the reader) and a page refreshing items already stored
    /// (`run` forgets the start). A backoff that runs out is picked up by a full plan every `rescan`.
    struct PlanStart {
        var mark: PlaceAtRow
        var position: ReadingPosition
        /// When it was first kept.
        var since: Date
    }

    static let rescan: TimeInterval = 30

    /// - Parameter directoryMayBeLink: the picture folder is the user's own, which may be a link
    ///   (see `PictureFiles`).
    public init(store: Store, client: HTTPClient, directory: String, directoryMayBeLink: Bool = false,
                options: PrefetchOptions, onEvent: @escaping @Sendable (PictureEvent) -> Void = { _ in }) {
        self.store = store
        self.client = client
        self.files = PictureFiles(directory: directory, folderMayBeLink: directoryMayBeLink)
        self.options = options
        self.onEvent = onEvent
        self.lane = HTTPLane(limit: options.concurrency)
    }

    /// A page was committed: there may be new pictures in the window. `refreshing`: it rewrote
    /// items already stored, whose pictures may have changed anywhere in the list.
    public func pagesChanged(refreshing: Bool = true) {
        signal {
            $0.pagesChanged = true
            $0.itemsRefreshed = $0.itemsRefreshed || refreshing
        }
    }

    /// Paging is over: `run` returns once nothing due is left.
    public func pagingFinished() {
        signal {
            $0.pagingFinished = true
            $0.pagesChanged = true
        }
    }

    /// Changes the signals and wakes `run` at once: waiting for its next tick cost up to a
    /// quarter second before the first pictures and again after the last.
    private func signal(_ change: (inout Signals) -> Void) {
        signals.withLock { state in
            change(&state)
            defer { state.waiter = nil }
            return state.waiter
        }?.resume()
    }

    /// A download ended (called on the client's thread). `run` is woken once half the lane's
    /// waiting downloads have started, or when none is left: a wakeup per picture cost two
    /// thread switches.
    func finished(_ job: PictureJob, _ outcome: DownloadOutcome) {
        signals.withLock { state -> CheckedContinuation<Void, Never>? in
            state.ended.append((job, outcome))
            state.downloading -= 1
            guard state.ended.count >= (options.concurrency + 1) / 2 || state.downloading == 0 else { return nil }
            defer { state.waiter = nil }
            return state.waiter
        }?.resume()
    }

    /// Returns at the next signal, or at once if one is pending.
    private func nextSignal() async {
        await withCheckedContinuation { continuation in
            let now = signals.withLock { state -> Bool in
                guard state.isEmpty else { return true }
                state.waiter = continuation
                return false
            }
            if now { continuation.resume() }
        }
    }

    /// Runs until paging has finished and the window holds nothing due (or the client is shut down:
    /// what was cut off stays due, not failed), then enforces the budget.
    public func run() async {
        guard options.mode != .none else { return }
        files.sweepTemporaryFiles()
        var queue: [PictureJob] = []
        var running = Set<Int64>()  // handed to the client
        var handles: [Int64: HTTPTransferHandle] = [:]  // of those, to withdraw them
        var withdrawn = Set<Int64>()
        var clientGone = false  // a download was cut off by the client's shutdown: start no more
        var tried = Set<Int64>()  // each picture at most once per run: failures wait for a later pull
        var lastPlan = Date.distantPast
        var lastPosition: ReadingPosition? = nil
        var planStart: PlanStart? = nil
        // Whether a plan made now could find jobs the last one did not: it found some, or a download
        // or a record has finished since (with `--images all` a plan holds only the nearest).
        var mayFindMore = false
        var written: [(job: PictureJob, picture: DownloadedPicture)] = []
        var recording = 0  // pictures being made durable and recorded
        var pagesPending = false
        var lastRecorded = Date()
        // Kept over the budget only until the next plan: eviction runs as the cache grows.
        var cache = CacheRoom(budget: budget, mode: options.mode, totals: (try? store.cachedTotals()) ?? CacheTotals())

        await withDiscardingTaskGroup { group in
            var ticking = false
            while true {
                let signalled = signals.withLock { state in
                    defer {
                        state.pagesChanged = false
                        state.itemsRefreshed = false
                        state.ended = []
                        state.recorded = nil
                        state.ticked = false
                    }
                    return state
                }
                if signalled.ticked { ticking = false }
                if signalled.itemsRefreshed { planStart = nil }
                if let recorded = signalled.recorded {
                    recording = 0
                    mayFindMore = true
                    lastRecorded = Date()
                    cache.totals.add(recorded)
                }
                for (job, outcome) in signalled.ended {
                    running.remove(job.id)
                    handles[job.id] = nil
                    let wasWithdrawn = withdrawn.remove(job.id) != nil  // a running one ends as usual
                    mayFindMore = true
                    switch outcome {
                    case .written(let picture): written.append((job, picture))
                    case .failed(let reason, let permanent): fail(job, reason, permanent: permanent)
                    case .cancelled:  // a later plan may take a withdrawn one again
                        if wasWithdrawn { tried.remove(job.id) } else { clientGone = true }
                    }
                }
                // Committed pages are planned for at once when the queue runs short, otherwise at
                // most ten times a second: pages can arrive far faster than pictures.
                pagesPending = pagesPending || signalled.pagesChanged
                let pagesDue = pagesPending
                    && (queue.count < options.concurrency || Date().timeIntervalSince(lastPlan) >= 0.1)
                let starved = queue.isEmpty && running.count < 2 * options.concurrency && mayFindMore
                if pagesDue || starved || Date().timeIntervalSince(lastPlan) >= 0.5 {
                    pagesPending = false
                    let position = currentPosition()
                    let inFlight = running.count + written.count + recording
                    if position != lastPosition { cache.readerMoved() }
                    cache.evictIfOver(around: position) { evict(around: $0) }
                    let wanted = plan(position, inFlight: inFlight, start: &planStart)
                    let planned = cache.admit(wanted.filter { !tried.contains($0.id) }, around: position,
                                              inFlight: inFlight, planSize: planSize(inFlight: inFlight))
                    mayFindMore = !planned.isEmpty
                    let kept = Set(planned.map(\.id))
                    var dropped = 0
                    if position != lastPosition {
                        dropped = queue.filter { !kept.contains($0.id) }.count
                        // Those waiting in the lane go too; running ones are left to finish.
                        let wantedIDs = Set(wanted.map(\.id))
                        for (id, handle) in handles where !wantedIDs.contains(id) && withdrawn.insert(id).inserted {
                            client.withdraw(handle)
                        }
                    }
                    if planned.map(\.id) != queue.map(\.id) { onEvent(.planned(queued: planned.count, dropped: dropped)) }
                    queue = planned
                    lastPlan = Date()
                    lastPosition = position
                }
                var starting: [PictureJob] = []
                while running.count < 2 * options.concurrency, !queue.isEmpty, !clientGone {
                    let job = queue.removeFirst()
                    running.insert(job.id)
                    tried.insert(job.id)
                    starting.append(job)
                }
                if !starting.isEmpty {
                    signals.withLock { $0.downloading += starting.count }
                    for job in starting { handles[job.id] = startDownload(job) }
                }
                if recording == 0, !written.isEmpty,
                   written.count >= Self.batch || running.isEmpty || Date().timeIntervalSince(lastRecorded) >= 0.25 {
                    recording = written.count
                    let batch = written
                    written = []
                    group.addTask {
                        let recorded = self.record(batch)
                        self.signal { $0.recorded = recorded }
                    }
                }
                if running.isEmpty, written.isEmpty, recording == 0,
                   clientGone || (queue.isEmpty && signalled.pagingFinished && !mayFindMore && !pagesPending) { break }
                if !ticking {
                    ticking = true
                    group.addTask {
                        // Cancelled, it signals nothing: an instant tick would make the loop spin.
                        guard (try? await Task.sleep(nanoseconds: 250_000_000)) != nil else { return }
                        self.signal { $0.ticked = true }
                    }
                }
                await nextSignal()
            }
            group.cancelAll()  // the tick
        }
        if let position = lastPosition {
            evict(around: position)
        }
    }

    func currentPosition() -> ReadingPosition {
        (try? store.latestReadingPosition()) ?? .start
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
    func plan(_ position: ReadingPosition, inFlight: Int, start: inout PlanStart?) -> [PictureJob] {
        guard options.mode == .all else {
            let window = PrefetchPlan.window(position, pagesAhead: options.pagesAhead)
            return PrefetchPlan.order((try? store.duePictures(feedURL: position.feedURL, rows: window)) ?? [], from: position)
        }
        let limit = planSize(inFlight: inFlight)
        let top = position.rows.lowerBound
        if let kept = start, kept.position != position || Date().timeIntervalSince(kept.since) >= Self.rescan {
            start = nil
        }
        let (below, end) = (try? store.duePictures(feedURL: position.feedURL, from: top, resuming: start?.mark,
                                                   limit: limit)) ?? ([], nil)
        if let mark = below.first.map({ PlaceAtRow(place: $0.place, row: $0.row) }) ?? end {
            start = PlanStart(mark: mark, position: position, since: start?.since ?? Date())
        }
        let above = (try? store.duePictures(feedURL: position.feedURL, rows: 0..<top, limit: limit, backwards: true)) ?? []
        var seen = Set<Int64>()
        return Array(PrefetchPlan.order(below + above, from: position).filter { seen.insert($0.id).inserted }.prefix(limit))
    }
}
