// One feed's pull: FeedPuller carries out what PullMachine (the feed's answers, over PagingMachine's
// paging) and FetchMachine (each request's attempts) decide. A pull of many feeds is
// PullCoordinator's, which gives each feed a FeedPuller of its own.

import FeedSyncFeed
import FeedSyncMarkup
import FeedSyncModel
import FeedSyncStore
import FeedSyncTransport
import Foundation
import Synchronization

/// Pulls feeds into the store, one page per transaction: carries out what `PullMachine` decides.
public final class FeedPuller: Sendable {
    let store: Store
    let client: HTTPClient
    /// Where a document longer than `inMemoryBytes` is written while it arrives.
    let downloadPath: String?

    /// Documents up to this size are read in memory; longer ones go to `downloadPath` and are
    /// read from there in parts of `partSize` items, each committed as it is read.
    static let inMemoryBytes = 4 << 20
    static let partSize = 250
    /// A document taking its turn (`PullOptions.reading`) is read at this niceness: the store's
    /// writer, which waits for it, comes first.
    static let readingNiceness: Int32 = 10

    public init(store: Store, client: HTTPClient, downloadPath: String? = nil) {
        self.store = store
        self.client = client
        self.downloadPath = downloadPath
    }

    /// Pulls one feed: head check, head walk, gap and backfill, as `PullMachine` decides. The
    /// outcome and the time the feed is due again are recorded on the feed whether it succeeds or
    /// not; a failure is in the report's `error`.
    public func pull(_ feed: Feed, options: PullOptions) async -> PullReport {
        var requests: [PullReport.Request] = []
        var machine = PullMachine(
            feed: feed, maxPages: options.maxPages, schedule: options.schedule, now: options.clock.now())
        var actions: [PullMachine.Action]
        do throws(PullFailure) {
            actions = machine.start(topBand: try await local { try await store.topBand(feedID: feed.id) })
        } catch {
            actions = machine.failed(error)
        }
        while !actions.isEmpty {
            do throws(PullFailure) {
                switch actions.removeFirst() {
                case .fetch(let request):
                    actions += try await answer(request, &machine, options, &requests)
                case .decode(let response, let expected, let context, let inParts):
                    defer { if let file = response.bodyFile { try? FileManager.default.removeItem(atPath: file) } }
                    actions += try await decode(response, expected, context, inParts, &machine, options)
                case .lookUp(let keys):
                    actions += machine.known(try await local { try await store.bands(feedID: feed.id, keys: keys) })
                case .commit(let commit):
                    try await local { try await store.commit(commit) }
                    options.onCommit(!commit.updatedItems.isEmpty)
                    actions += machine.committed()
                case .report(let event):
                    options.onEvent(event)
                case .finish(let record, let report):
                    return await finish(feed.id, record, report, requests, options)
                }
            } catch {
                actions = machine.failed(error)
            }
        }
        preconditionFailure("a pull ends with .finish")
    }

    static let checkDisk = "check the disk and the data home's permissions"

    /// Asks for `request` (with retries) and hands the answer to the machine. A body written to
    /// a file and not to be read (an error page, a 304) goes at once.
    private func answer(
        _ request: HTTPRequest, _ machine: inout PullMachine, _ options: PullOptions,
        _ requests: inout [PullReport.Request]
    ) async throws(PullFailure) -> [PullMachine.Action] {
        if Task.isCancelled { throw PullFailure.interrupted }
        var request = request
        request.spill = downloadPath.map { ($0, Self.inMemoryBytes) }
        let feedURL = machine.feed.url
        request.onProgress = { options.onEvent(.receiving(url: feedURL, bytes: $0)) }
        options.onEvent(.fetching(url: feedURL))
        let response = try await fetch(request, options: options, requests: &requests)
        options.onEvent(.fetched(url: feedURL, bytes: response.bodyBytes))
        let next = machine.answered(response)
        if let file = response.bodyFile, !next.contains(where: { if case .decode = $0 { true } else { false } }) {
            try? FileManager.default.removeItem(atPath: file)
        }
        return next
    }

    /// Records the outcome on the feed's row; the report, with every request and what became of
    /// the row (a move, or a local failure writing it).
    private func finish(
        _ feedID: Int64, _ record: PullRecord, _ report: PullReport, _ requests: [PullReport.Request],
        _ options: PullOptions
    ) async -> PullReport {
        var report = report
        report.requests = requests
        // No server answered this feed: recorded at the run's end, unless the run was offline.
        if report.unanswered, let network = options.network {
            network.hold(record, of: feedID)
            return report
        }
        do {
            report.movedTo = try await store.recordPull(feedID: feedID, record)
        } catch {
            report.error = report.error ?? SyncError(.local, "\(error.message); \(Self.checkDisk)")
        }
        return report
    }

    /// Reads an answer's document: whole, or from its file in parts, each committed as it is read.
    private func decode(
        _ response: HTTPResponse, _ expected: FeedFormat?, _ context: DocumentContext, _ inParts: Bool,
        _ machine: inout PullMachine, _ options: PullOptions
    ) async throws(PullFailure) -> [PullMachine.Action] {
        do {
            let (found, page) =
                if let file = response.bodyFile {
                    try await read(
                        file, format: expected, context: context, inParts: inParts, machine: &machine,
                        onCommit: options.onCommit)
                } else {
                    try await options.reading.run {
                        try await onOwnThread(niceness: Self.readingNiceness) {
                            try FeedDocument.decode(response.body, format: expected, context: context)
                        }
                    }
                }
            return machine.decoded(found, page, from: response)
        } catch let error as FeedError {
            return machine.unusable(error)
        } catch let failure as PullFailure {
            throw failure
        } catch {
            throw PullFailure(SyncError(.local, "\(error)"))
        }
    }

    /// Reads a long document from its file in parts, committing each part as it is read, so
    /// memory holds a few parts however long the document. Parsing blocks on the file, so it runs
    /// on a thread of its own, at most two parts ahead of the commits. Returns the page without
    /// its items.
    private func read(
        _ file: String, format: FeedFormat?, context: DocumentContext, inParts: Bool, machine: inout PullMachine,
        onCommit: @Sendable (Bool) -> Void
    ) async throws -> (FeedFormat, FeedPage) {
        guard inParts else {
            return try await onOwnThread {
                var items: [FeedItem] = []
                var (found, page) = try FeedDocument.decode(
                    fileAt: file, format: format, context: context, batch: Self.partSize
                ) { items += $0 }
                page.items = items
                return (found, page)
            }
        }
        struct Stopped: Error {}
        let (parts, sink) = AsyncStream.makeStream(of: [FeedItem].self)
        let room = DispatchSemaphore(value: 2)  // parts parsed and not yet taken
        async let parsed = onOwnThread {
            defer { sink.finish() }
            return try FeedDocument.decode(fileAt: file, format: format, context: context, batch: Self.partSize) {
                items in
                room.wait()
                if case .terminated = sink.yield(items) { throw Stopped() }
            }
        }
        do {
            for await items in parts {
                room.signal()
                if Task.isCancelled { throw PullFailure.interrupted }
                let bands = try await local {
                    try await store.bands(feedID: machine.feed.id, keys: PullMachine.keysToLookUp(items))
                }
                let commit = machine.part(items, bands: bands)
                try await local { try await store.commit(commit) }
                onCommit(!commit.updatedItems.isEmpty)
            }
        } catch {
            sink.finish()
            room.signal()  // a parser waiting for room wakes, finds the stream finished and ends
            _ = try? await parsed
            throw error
        }
        return try await parsed
    }

    /// One request with retries, each logged in `report`. Returns any response that is not a
    /// transient failure, whatever its status.
    private func fetch(
        _ request: HTTPRequest, options: PullOptions, requests: inout [PullReport.Request]
    ) async throws(PullFailure) -> HTTPResponse {
        var machine = FetchMachine(url: request.url, policy: options.retry)
        let decision = await options.network?.admit(request.url) ?? .ask
        var event = FetchMachine.Event.admitted(
            decision, silence: decision == .silentHost ? options.network?.silence(of: request.url) : nil)
        while true {
            // Each step's actions end in the one that gives the next event: ask, wait, deliver or fail.
            for action in machine.handle(event, now: options.clock.now(), jitter: .random(in: 0...1)) {
                switch action {
                case .ask:
                    do {
                        event = .answered(try await client.get(request))
                    } catch {
                        event = error.kind == .cancelled || Task.isCancelled ? .cancelled : .failed(error)
                    }
                case .log(let made): requests.append(made)
                case .note(.heard): options.network?.heard(from: request.url)
                case .note(.release): options.network?.release(request.url)
                case .note(.noAnswer(let how)): options.network?.noAnswer(from: request.url, how)
                case .note(.stalled): options.network?.stalled(request.url)
                case .report(let happened): options.onEvent(happened)
                case .wait(let seconds):
                    do {
                        try await Task.sleep(nanoseconds: UInt64(seconds * 1e9))
                        event = .waited
                    } catch {
                        event = .cancelled
                    }
                case .deliver(let response): return response
                case .fail(let failure): throw failure
                }
            }
        }
    }

    private func local<T>(_ body: () async throws -> T) async throws(PullFailure) -> T {
        do {
            return try await body()
        } catch let error as StoreError where error.kind == .locked {
            throw PullFailure(SyncError(.transient, error.message))
        } catch {
            throw PullFailure(SyncError(.local, "\(error); \(Self.checkDisk)"))
        }
    }
}
