import FeedSyncStore
import FeedSyncTransport
import Foundation
import Synchronization

/// Downloads pictures for the rows the reader will see next while a pull is paging.
///
/// It plans from the store: the reading position `list` recorded, the rows of the window, the
/// pictures there that are due. It plans again whenever a page is committed, and at least every
/// half second, so a reader who moves is followed within about a second: queued downloads outside
/// the new window are dropped, never started. Downloads already running finish.
public final class PicturePrefetcher: Sendable {
    let store: Store
    let client: HTTPClient
    let files: PictureFiles
    let options: PrefetchOptions
    let onEvent: @Sendable (PictureEvent) -> Void
    private let signals = Mutex(Signals())

    struct Signals {
        var pagesChanged = true
        var pagingFinished = false
        /// `run` waiting for the next signal; resumed by it, or when `run` ends.
        var waiter: CheckedContinuation<Void, Never>?
        var closed = false
    }

    enum Finished: Sendable {
        case download(PictureJob, written: DownloadedPicture?)
        case recorded(bytes: Int64)
        case tick
        case signalled
    }

    /// Written pictures are made durable and recorded together: at this many, when nothing else
    /// is downloading, and at least every quarter second.
    static let batch = 32

    public init(store: Store, client: HTTPClient, directory: String, options: PrefetchOptions,
                onEvent: @escaping @Sendable (PictureEvent) -> Void = { _ in }) {
        self.store = store
        self.client = client
        self.files = PictureFiles(directory: directory)
        self.options = options
        self.onEvent = onEvent
    }

    /// A page was committed: there may be new pictures in the window.
    public func pagesChanged() {
        signal { $0.pagesChanged = true }
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

    /// Returns at the next signal (or at once if one is pending, or `run` is over).
    private func nextSignal() async {
        await withCheckedContinuation { continuation in
            let now = signals.withLock { state -> Bool in
                guard !state.pagesChanged, !state.closed else { return true }
                state.waiter = continuation
                return false
            }
            if now { continuation.resume() }
        }
    }

    /// Runs until paging has finished and the window holds nothing due, then enforces the budget.
    public func run() async {
        guard options.mode != .none else { return }
        files.sweepTemporaryFiles()
        var queue: [PictureJob] = []
        var running = Set<Int64>()
        var tried = Set<Int64>()  // each picture at most once per run: failures wait for a later pull
        var lastPlan = Date.distantPast
        var lastPosition: ReadingPosition? = nil
        var written: [(job: PictureJob, picture: DownloadedPicture)] = []
        var recording = false
        var lastRecorded = Date()
        // Kept over the budget only until the next plan: eviction runs as the cache grows.
        var cachedBytes = (try? store.cachedBytes()) ?? 0

        await withTaskGroup(of: Finished.self) { group in
            var ticking = false
            var listening = false
            while true {
                let (changed, finished) = signals.withLock { state -> (Bool, Bool) in
                    defer { state.pagesChanged = false }
                    return (state.pagesChanged, state.pagingFinished)
                }
                if changed || Date().timeIntervalSince(lastPlan) >= 0.5 {
                    let position = currentPosition()
                    let planned = plan(position).filter { !running.contains($0.id) && !tried.contains($0.id) }
                    let kept = Set(planned.map(\.id))
                    let dropped = position != lastPosition ? queue.filter { !kept.contains($0.id) }.count : 0
                    if planned.map(\.id) != queue.map(\.id) { onEvent(.planned(queued: planned.count, dropped: dropped)) }
                    queue = planned
                    lastPlan = Date()
                    lastPosition = position
                    if cachedBytes > options.cacheBudget { cachedBytes -= evict(around: position) }
                }
                while running.count < options.concurrency, !queue.isEmpty {
                    let job = queue.removeFirst()
                    running.insert(job.id)
                    tried.insert(job.id)
                    group.addTask { .download(job, written: await self.download(job)) }
                }
                if !recording, !written.isEmpty,
                   written.count >= Self.batch || running.isEmpty || Date().timeIntervalSince(lastRecorded) >= 0.25 {
                    recording = true
                    let batch = written
                    written = []
                    group.addTask { .recorded(bytes: self.record(batch)) }
                }
                if running.isEmpty, queue.isEmpty, written.isEmpty, !recording, finished { break }
                if !ticking {
                    ticking = true
                    group.addTask {
                        try? await Task.sleep(nanoseconds: 250_000_000)
                        return .tick
                    }
                }
                if !listening {
                    listening = true
                    group.addTask {
                        await self.nextSignal()
                        return .signalled
                    }
                }
                switch await group.next() {
                case .download(let job, let picture)?:
                    running.remove(job.id)
                    if let picture { written.append((job, picture)) }
                case .recorded(let bytes)?:
                    recording = false
                    lastRecorded = Date()
                    cachedBytes += bytes
                case .tick?: ticking = false
                case .signalled?: listening = false
                case nil: break
                }
            }
            signal { $0.closed = true }  // the waiting child task returns, so the group can end
            group.cancelAll()
        }
        if let position = lastPosition {
            evict(around: position)
        }
    }

    func currentPosition() -> ReadingPosition {
        (try? store.latestReadingPosition()) ?? .start
    }

    /// Due pictures in the window (or everywhere, for `all`), nearest first.
    func plan(_ position: ReadingPosition) -> [PictureJob] {
        let rows = options.mode == .all ? 0..<Int(Int32.max) : PrefetchPlan.window(position, pagesAhead: options.pagesAhead)
        let jobs = (try? store.duePictures(feedURL: position.feedURL, rows: rows)) ?? []
        return PrefetchPlan.order(jobs, from: position)
    }
}
