import FeedSyncModel
import FeedSyncStore
import Foundation

/// How one picture's download ended.
public enum DownloadOutcome: Sendable, Equatable {
    case written(DownloadedPicture)
    case failed(String, permanent: Bool)
    /// Withdrawn before it started (the reader moved on), or cut off by shutdown: nothing to record.
    case cancelled
}

/// The prefetcher's decisions, without I/O: which pictures to start, which to take back, when to
/// plan again, when to record what was written, when to stop. `PicturePrefetcher` feeds it events
/// (pages committed, a download ended, a record finished, a plan made, a tick) with the time, and
/// carries out the actions it returns; every rule here is unit-tested without a store or network.
public struct PrefetchMachine: Sendable {
    public enum Event: Sendable {
        /// A page was committed; `refreshing`: it rewrote items already stored, whose pictures may
        /// have changed anywhere in the list.
        case pagesCommitted(refreshing: Bool)
        /// Paging is over: once nothing due is left, the run finishes.
        case pagingFinished
        /// The reader's position, read for the plan the machine asked for (`Action.plan`).
        case positioned(ReadingPosition, inFlight: Int)
        /// The due pictures around `position`, nearest first, as the store found them
        /// (`Action.prepare`).
        case found(position: ReadingPosition, wanted: [PictureJob], inFlight: Int)
        /// The plan made: the reader's position, the due pictures nearest first and, of those
        /// not tried in this run, the ones the cache has room for (`Action.admit`).
        case planned(position: ReadingPosition, wanted: [PictureJob], admitted: [PictureJob])
        case ended(id: Int64, DownloadOutcome)
        /// A `record` action finished; `failure`: why it cached nothing (its files are removed).
        case recorded(failure: String?)
        /// Time passed (the shell ticks every `tick` seconds while the machine runs).
        case tick
    }

    public enum Action: Sendable, Equatable {
        /// Read the reader's position (then send `.positioned`) for a plan; `forgetStart`: a page
        /// rewrote stored items, so a due picture may be anywhere above where the last plan reached.
        case plan(inFlight: Int, forgetStart: Bool)
        /// Plan around `position`: tell the cache the reader moved when `readerMoved`, evict if
        /// over the budget, then find the due pictures (and send `.found`).
        case prepare(position: ReadingPosition, readerMoved: Bool, inFlight: Int)
        /// Of `untried` (the found pictures not tried in this run), let the cache take those it has
        /// room for (then send `.planned` with `wanted`, all that were found).
        case admit(position: ReadingPosition, untried: [PictureJob], wanted: [PictureJob], inFlight: Int)
        /// Hand these to the client, in this order.
        case start([PictureJob])
        /// Take back these downloads if they still wait for a connection.
        case withdraw([Int64])
        /// Make these written pictures durable and mark them cached, then send `.recorded`.
        case record([WrittenPicture])
        /// Mark this picture failed (`retryDelay` says for how long).
        case fail(PictureJob, reason: String, permanent: Bool)
        /// Tell the user (progress line, --verbose).
        case report(PictureEvent)
        /// Nothing is left to do: evict down to the budget around the last position and stop.
        case finish(lastPosition: ReadingPosition?)
    }

    /// A written picture and the job it was for.
    public struct WrittenPicture: Sendable, Equatable {
        public var job: PictureJob
        public var picture: DownloadedPicture
    }

    /// Downloads run `concurrency` at a time in the client's lane; as many more wait there.
    public let concurrency: Int
    /// Written pictures are recorded together: at this many, when nothing else is downloading, and
    /// at least every `recordInterval`. Fewer, larger batches mean fewer transactions; the interval
    /// bounds what a killed pull downloads again.
    public static let batch = 128
    public static let recordInterval: TimeInterval = 0.25
    /// Committed pages are planned for at once when the queue runs short, otherwise at most this
    /// often: pages can arrive far faster than pictures.
    public static let pagePlanInterval: TimeInterval = 0.1
    /// A plan at least this often, so a reader who moves is followed within about a second.
    public static let planInterval: TimeInterval = 0.5
    public static let tick: TimeInterval = 0.25

    /// Planned and not yet started, nearest first.
    public private(set) var queue: [PictureJob] = []
    /// Handed to the client and not ended.
    public private(set) var running: [Int64: PictureJob] = [:]
    /// Of those, the ones taken back; they end as cancelled (or, already running, as usual).
    private var withdrawn = Set<Int64>()
    /// Each picture at most once per run: failures wait for a later pull.
    private var tried = Set<Int64>()
    /// A download was cut off by the client's shutdown: start no more.
    private var clientGone = false
    private var written: [WrittenPicture] = []
    /// The batch being recorded.
    private var recording: [WrittenPicture]?
    private var lastRecorded: Date
    private var pagesPending = true
    private var itemsRefreshed = false
    private var pagingFinished = false
    /// Whether a plan made now could find jobs the last one did not: it found some, or a download
    /// or a record has finished since (with `--images all` a plan holds only the nearest).
    private var mayFindMore = false
    private var planning = false
    private var lastPlan = Date.distantPast
    public private(set) var lastPosition: ReadingPosition?
    private var finished = false

    public init(concurrency: Int, now: Date) {
        self.concurrency = max(1, concurrency)
        lastRecorded = now
    }

    /// Whether this run already tried the picture (a plan leaves those out).
    public func hasTried(_ id: Int64) -> Bool { tried.contains(id) }

    /// Pictures planned, downloading, written or being recorded: still due in the store.
    public var inFlight: Int { running.count + written.count + (recording?.count ?? 0) }

    /// A failed picture is not asked for again for this long: a missing or unusable one for three
    /// days; one that failed for a reason that may pass from a minute, doubling with each failure
    /// in a row, up to a day.
    public static func retryDelay(permanent: Bool, attempts: Int) -> TimeInterval {
        permanent ? 3 * 86_400 : min(86_400, 60 * pow(2, Double(min(max(attempts, 0), 20))))
    }

    /// Takes one event; returns what to do, in order.
    public mutating func handle(_ event: Event, now: Date) -> [Action] {
        guard !finished else { return [] }
        var actions: [Action] = []
        switch event {
        case .pagesCommitted(let refreshing):
            pagesPending = true
            itemsRefreshed = itemsRefreshed || refreshing
        case .pagingFinished:
            pagingFinished = true
            pagesPending = true
        // The plan's steps, one after the other: nothing else is decided until it is in (`.planned`).
        case .positioned(let position, let inFlight):
            return [.prepare(position: position, readerMoved: position != lastPosition, inFlight: inFlight)]
        case .found(let position, let wanted, let inFlight):
            return [
                .admit(
                    position: position, untried: wanted.filter { !tried.contains($0.id) }, wanted: wanted,
                    inFlight: inFlight)
            ]
        case .planned(let position, let wanted, let admitted):
            planning = false
            actions += adopt(admitted, wanted: wanted, at: position, now: now)
        case .ended(let id, let outcome):
            guard let job = running.removeValue(forKey: id) else { break }
            let wasWithdrawn = withdrawn.remove(id) != nil  // a running one ends as usual
            mayFindMore = true
            switch outcome {
            case .written(let picture): written.append(WrittenPicture(job: job, picture: picture))
            case .failed(let reason, let permanent): actions.append(.fail(job, reason: reason, permanent: permanent))
            case .cancelled:
                // A later plan may take a withdrawn one again; any other was cut off by shutdown.
                if wasWithdrawn { tried.remove(id) } else { clientGone = true }
            }
        case .recorded(let failure):
            let batch = recording ?? []
            recording = nil
            mayFindMore = true
            lastRecorded = now
            if let failure {
                actions += batch.map { .fail($0.job, reason: failure, permanent: false) }
            } else {
                actions += batch.map {
                    .report(.cached(url: $0.job.url, bytes: Int($0.picture.bytes), feedID: $0.job.place.feedID))
                }
            }
        case .tick:
            break
        }
        actions += step(now: now)
        return actions
    }

    /// What the state calls for now: a plan, downloads to start, a batch to record, the end.
    private mutating func step(now: Date) -> [Action] {
        var actions: [Action] = []
        if !planning {
            let pagesDue =
                pagesPending
                && (queue.count < concurrency || now.timeIntervalSince(lastPlan) >= Self.pagePlanInterval)
            let starved = queue.isEmpty && running.count < 2 * concurrency && mayFindMore
            if pagesDue || starved || now.timeIntervalSince(lastPlan) >= Self.planInterval {
                pagesPending = false
                planning = true
                actions.append(.plan(inFlight: inFlight, forgetStart: itemsRefreshed))
                itemsRefreshed = false
                return actions  // the rest once the plan is in
            }
        }
        var starting: [PictureJob] = []
        while running.count < 2 * concurrency, !queue.isEmpty, !clientGone {
            let job = queue.removeFirst()
            running[job.id] = job
            tried.insert(job.id)
            starting.append(job)
        }
        if !starting.isEmpty { actions.append(.start(starting)) }
        if recording == nil, !written.isEmpty,
            written.count >= Self.batch || running.isEmpty || now.timeIntervalSince(lastRecorded) >= Self.recordInterval
        {
            recording = written
            actions.append(.record(written))
            written = []
        }
        if running.isEmpty, written.isEmpty, recording == nil,
            clientGone || (queue.isEmpty && pagingFinished && !mayFindMore && !pagesPending)
        {
            finished = true
            actions.append(.finish(lastPosition: lastPosition))
        }
        return actions
    }

    /// Makes `admitted` (nearest first, none tried yet) the queue. When the reader has moved, the
    /// queued jobs left out are dropped and the downloads still waiting in the client that are no
    /// longer wanted are taken back; running ones finish.
    private mutating func adopt(
        _ admitted: [PictureJob], wanted: [PictureJob], at position: ReadingPosition,
        now: Date
    ) -> [Action] {
        var actions: [Action] = []
        let planned = admitted.filter { !tried.contains($0.id) }
        mayFindMore = !planned.isEmpty
        var dropped = 0
        if position != lastPosition {
            let kept = Set(planned.map(\.id))
            dropped = queue.filter { !kept.contains($0.id) }.count
            let wantedIDs = Set(wanted.map(\.id))
            let takeBack = running.keys.filter { !wantedIDs.contains($0) && !withdrawn.contains($0) }.sorted()
            withdrawn.formUnion(takeBack)
            if !takeBack.isEmpty { actions.append(.withdraw(takeBack)) }
        }
        if planned.map(\.id) != queue.map(\.id) {
            actions.append(.report(.planned(queued: planned.count, dropped: dropped)))
        }
        queue = planned
        lastPlan = now
        lastPosition = position
        return actions
    }
}
