import FeedSyncDemoServer
import FeedSyncImages
import FeedSyncModel
import FeedSyncPull
import FeedSyncStore
import Foundation
import Synchronization
import Testing

@testable import FeedSyncKit

/// The engine called in-process through `FeedSync`, as the reading page's server calls it: no
/// binary, a real store in a temp folder, real transfers to the demo server.
@Suite(.serialized) struct LibraryTests {
    /// Everything a pull reported, in order.
    final class Updates: Sendable {
        private let all = Mutex<[FeedSync.PullUpdate]>([])
        func add(_ update: FeedSync.PullUpdate) { all.withLock { $0.append(update) } }
        var list: [FeedSync.PullUpdate] { all.withLock { $0 } }
        var pagesStored: Int {
            list.filter { if case .feed(.page) = $0 { true } else { false } }.count
        }
        var picturesCached: [String] {
            list.compactMap { if case .picture(.cached(let url, _, _)) = $0 { url } else { nil } }
        }
    }

    func settings(_ mode: PrefetchMode, concurrency: Int = 8) -> FeedSync.PullSettings {
        var settings = FeedSync.PullSettings()
        settings.pictures = PrefetchOptions(mode: mode, concurrency: concurrency)
        settings.feeds.retry.baseDelay = 0.05
        return settings
    }

    @Test func aPullInProcessReportsItsProgressAndFollowsTheReaderWhoMovesMidPull() async throws {
        let home = try TempDirectory()
        let library = try FeedSync(home: DataHome(override: home.path), access: .writing)
        try await withServer(items: 400, perPage: 10) { server, url in
            // The items first, with their events and outcome.
            let feed = try await library.subscribe(url: url)
            let first = Updates()
            let outcomes = await library.pull([feed], settings: settings(.none), onUpdate: first.add)
            guard let report = outcomes.first ?? nil, report.error == nil else {
                Issue.record("the pull failed: \(outcomes)")
                return
            }
            #expect(report.newItems == 400 && report.requests.map(\.status) == Array(repeating: 200, count: 40))
            #expect(first.pagesStored == 40)
            #expect(
                first.list.contains { if case .finished(0, _, let report) = $0 { report.error == nil } else { false } })
            #expect(try await library.list(ListQuery(feedURL: nil), page: 1, perPage: 10).total == 400)

            // Pictures, one at a time and slow, for a reader on page 1 who moves to page 30.
            try await library.setReadingPosition(ReadingPosition(feedURL: nil, page: 1, perPage: 10))
            var faults = Faults()
            faults.pictureLatency = 0.1
            server.setFaults(faults)
            server.clearLog()
            let second = Updates()
            let pull = Task {
                await library.pull([feed], settings: settings(.window, concurrency: 1), onUpdate: second.add)
            }
            for _ in 0..<300 where server.pictureRequests.count < 5 {
                try await Task.sleep(nanoseconds: 20_000_000)
            }
            let moved = ReadingPosition(feedURL: nil, page: 30, perPage: 10)
            try await library.setReadingPosition(moved)
            #expect(try await library.readingPosition() == moved)
            let again = await pull.value
            guard let report = again.first ?? nil, report.error == nil else {
                Issue.record("the second pull failed: \(again)")
                return
            }
            // Old window: rows 0...59; new: rows 280...349 (a page before page 30, five after).
            let requested = Set(server.pictureRequests)
            let newWindow = (280...349).map { "/pictures/\(400 - $0).png" }
            let oldFarEnd = (30...59).map { "/pictures/\(400 - $0).png" }
            #expect(requested.isDisjoint(with: oldFarEnd), "the old window's queue was dropped")
            #expect(requested.isSuperset(of: newWindow), "the new window was fetched")
            #expect(
                second.list.contains { if case .picture(.planned(_, let dropped)) = $0 { dropped > 0 } else { false } })
            let cached = Set(second.picturesCached.compactMap { URL(string: $0)?.path })
            #expect(cached == requested, "each picture fetched was reported cached")
            let listed = try await library.list(ListQuery(feedURL: nil), page: 30, perPage: 10).items
            #expect(listed.allSatisfy { $0.imageStatus == .cached })
            for item in listed {
                let path = await library.picturePath(item.image)
                #expect(path.map { FileManager.default.fileExists(atPath: $0) } == true)
            }
        }
    }

    @Test func collectingGarbageInProcessFitsTheCacheAroundTheReader() async throws {
        let home = try TempDirectory()
        let library = try FeedSync(home: DataHome(override: home.path), access: .writing)
        try await withServer(items: 60, perPage: 10) { _, url in
            let feed = try await library.subscribe(url: url)
            _ = await library.pull([feed], settings: settings(.all), onUpdate: { _ in })
            let stray = home.path + "/pictures/stray.png"
            #expect(FileManager.default.createFile(atPath: stray, contents: Data("x".utf8)))
            let bytes = try await library.store.cachedTotals().bytes
            #expect(bytes > 0)
            // Room for about a third: the window around page 1 (rows 0...59, all of them) stays.
            let report = try await library.collectGarbage(cacheSize: bytes / 3, pagesAhead: 5)
            #expect(report.unknownFiles == 1 && !FileManager.default.fileExists(atPath: stray))
            #expect(report.evicted == 0, "every row is in the window")
            try await library.setReadingPosition(ReadingPosition(feedURL: nil, page: 6, perPage: 10))
            // Rows 40...59 are the window now; half the cache fits them and some of the rest.
            let moved = try await library.collectGarbage(cacheSize: bytes / 2, pagesAhead: 0)
            #expect(moved.evicted > 0 && moved.evictedBytes > 0)
            #expect(try await library.store.cachedTotals().bytes <= bytes / 2)
        }
    }
}
