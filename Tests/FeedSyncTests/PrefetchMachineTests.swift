import FeedSyncModel
import FeedSyncStore
import Foundation
import Testing

@testable import FeedSyncImages

/// The prefetcher's decisions, event by event, with no store, network or clock: time is passed in.
struct PrefetchMachineTests {
    typealias Machine = PrefetchMachine

    let t0 = Date(timeIntervalSince1970: 1_000_000)
    func at(_ seconds: Double) -> Date { t0.addingTimeInterval(seconds) }

    func job(_ id: Int64, row: Int? = nil) -> PictureJob {
        let row = row ?? Int(id)
        return PictureJob(id: id, url: "http://h/\(id).png", row: row, place: ListPlace(feedID: 1, band: 0, seq: row))
    }

    func jobs(_ ids: ClosedRange<Int64>) -> [PictureJob] { ids.map { job($0) } }

    func page(_ page: Int) -> ReadingPosition { ReadingPosition(feedURL: nil, page: page, perPage: 10) }

    func picture(_ id: Int64, bytes: Int64 = 100) -> DownloadedPicture {
        DownloadedPicture(id: id, file: "\(id).png", bytes: bytes, mime: "image/png")
    }

    /// A machine that has planned `admitted` at `position` (at t0) and started what it could.
    func planned(_ admitted: [PictureJob], at position: ReadingPosition, concurrency: Int = 1)
        -> (Machine, [Machine.Action])
    {
        var machine = Machine(concurrency: concurrency, now: t0)
        #expect(machine.handle(.tick, now: t0) == [.plan(inFlight: 0, forgetStart: false)], "plans at once")
        let actions = machine.handle(.planned(position: position, wanted: admitted, admitted: admitted), now: t0)
        return (machine, actions)
    }

    /// Hands `event` to the machine as the shell does: a plan it asks for is made at once, finding
    /// `due` at `position`. Returns every action, the plan's included.
    func send(
        _ event: Machine.Event, to machine: inout Machine, at seconds: Double,
        due: [PictureJob] = [], position: ReadingPosition? = nil
    ) -> [Machine.Action] {
        var actions = machine.handle(event, now: at(seconds))
        while let index = actions.firstIndex(where: { if case .plan = $0 { true } else { false } }),
            !actions[(index + 1)...].contains(where: { if case .report(.planned) = $0 { true } else { false } })
        {
            let answer = machine.handle(
                .planned(position: position ?? machine.lastPosition ?? page(1), wanted: due, admitted: due),
                now: at(seconds))
            actions += answer
            if !answer.contains(where: { if case .plan = $0 { true } else { false } }) { break }
        }
        return actions
    }

    @Test func aPlanAsksThePositionThenTheDuePicturesThenAdmitsTheUntriedOnes() {
        var machine = Machine(concurrency: 2, now: t0)
        #expect(machine.handle(.tick, now: t0) == [.plan(inFlight: 0, forgetStart: false)])
        // The first plan: the reader has moved (from nowhere).
        #expect(
            machine.handle(.positioned(page(2), inFlight: 0), now: t0)
                == [.prepare(position: page(2), readerMoved: true, inFlight: 0)])
        #expect(
            machine.handle(.found(position: page(2), wanted: jobs(1...3), inFlight: 0), now: t0)
                == [.admit(position: page(2), untried: jobs(1...3), wanted: jobs(1...3), inFlight: 0)])
        let started = machine.handle(.planned(position: page(2), wanted: jobs(1...3), admitted: jobs(1...3)), now: t0)
        #expect(started.contains(.start(jobs(1...3))))
        // The next plan, the reader still there: not moved; what was tried is not admitted again.
        #expect(
            machine.handle(.positioned(page(2), inFlight: 3), now: at(1))
                == [.prepare(position: page(2), readerMoved: false, inFlight: 3)])
        #expect(
            machine.handle(.found(position: page(2), wanted: jobs(1...4), inFlight: 3), now: at(1))
                == [.admit(position: page(2), untried: [job(4)], wanted: jobs(1...4), inFlight: 3)])
        #expect(
            machine.handle(.positioned(page(5), inFlight: 3), now: at(1))
                == [.prepare(position: page(5), readerMoved: true, inFlight: 3)])
    }

    func records(_ actions: [Machine.Action]) -> [[Int64]] {
        actions.compactMap { if case .record(let batch) = $0 { batch.map(\.job.id) } else { nil } }
    }

    func started(_ actions: [Machine.Action]) -> [Int64] {
        actions.flatMap { action -> [Int64] in
            if case .start(let jobs) = action { return jobs.map(\.id) }
            return []
        }
    }

    // MARK: Window order

    @Test func theRowsNearestTheReaderComeFirstAndBelowBeforeAbove() {
        let position = page(3)  // rows 20..<30
        let rows = [0, 45, 19, 30, 25, 21, 10, 31]
        let ordered = PrefetchPlan.order(rows.map { job(Int64($0)) }, from: position).map(\.row)
        #expect(ordered == [21, 25, 30, 19, 31, 10, 45, 0])
        #expect(PrefetchPlan.window(position, pagesAhead: 2) == 10..<50, "a page before to two after")
    }

    @Test func downloadsStartInThePlansOrderTwiceTheConcurrencyAtOnce() {
        let (machine, actions) = planned(jobs(1...10), at: page(1), concurrency: 2)
        #expect(started(actions) == [1, 2, 3, 4], "two running, two waiting in the client's lane")
        #expect(machine.queue.map(\.id) == Array(5...10))
        #expect(actions.contains(.report(.planned(queued: 10, dropped: 0))))
    }

    @Test func aDownloadThatEndsStartsTheNextInLine() {
        var (machine, _) = planned(jobs(1...5), at: page(1))
        let actions = machine.handle(.ended(id: 1, .failed("the server answered 404", permanent: true)), now: at(0.01))
        #expect(actions.contains(.fail(job(1), reason: "the server answered 404", permanent: true)))
        #expect(started(actions) == [3])
    }

    // MARK: Re-target and withdraw

    @Test func aReaderWhoMovesGetsANewQueueAndTheWaitingDownloadsAreTakenBack() {
        var (machine, _) = planned(jobs(1...10), at: page(1))  // 1 and 2 handed over, 3...10 queued
        // Within half a second nothing is planned again unless something calls for it.
        #expect(machine.handle(.tick, now: at(0.25)).isEmpty)
        #expect(machine.handle(.tick, now: at(0.5)) == [.plan(inFlight: 2, forgetStart: false)])
        let newWindow = [job(300), job(301), job(302)]
        let actions = machine.handle(.planned(position: page(30), wanted: newWindow, admitted: newWindow), now: at(0.5))
        #expect(actions.contains(.withdraw([1, 2])), "both still in the client and no longer wanted")
        #expect(actions.contains(.report(.planned(queued: 3, dropped: 8))), "the old queue is dropped")
        #expect(started(actions).isEmpty, "the lane is full until the taken-back ones end")
        #expect(machine.queue.map(\.id) == [300, 301, 302])

        // One was already running and finishes; the other never started.
        let first = machine.handle(.ended(id: 1, .written(picture(1))), now: at(0.6))
        #expect(started(first) == [300])
        let second = machine.handle(.ended(id: 2, .cancelled), now: at(0.6))
        #expect(started(second) == [301])
        #expect(!machine.hasTried(2), "a withdrawn picture may be planned again")
        #expect(machine.hasTried(1))
    }

    @Test func aReaderWhoStaysKeepsTheDownloadsInTheLaneThoughAPlanLeavesThemOut() {
        var (machine, _) = planned(jobs(1...4), at: page(1))
        _ = machine.handle(.tick, now: at(0.5))
        let actions = machine.handle(.planned(position: page(1), wanted: [job(3)], admitted: [job(3)]), now: at(0.5))
        #expect(!actions.contains { if case .withdraw = $0 { true } else { false } })
    }

    // MARK: Coalescing

    @Test func pagesCommittedInABurstArePlannedForAtMostTenTimesASecondWhileTheQueueIsFull() {
        var (machine, _) = planned(jobs(1...10), at: page(1))
        var plans: [Double] = []
        for step in 1...10 {  // a page every 20 ms
            let time = Double(step) * 0.02
            if machine.handle(.pagesCommitted(refreshing: false), now: at(time)).contains(where: {
                if case .plan = $0 { true } else { false }
            }) {
                plans.append(time)
                _ = machine.handle(
                    .planned(position: page(1), wanted: jobs(3...10), admitted: jobs(3...10)), now: at(time))
            }
        }
        #expect(plans.count == 2, "\(plans)")
        #expect(plans.allSatisfy { $0 >= 0.1 }, "not before 0.1 s: \(plans)")
        #expect(machine.handle(.pagesCommitted(refreshing: true), now: at(0.21)).isEmpty, "within 0.1 s of the last")
        let actions = machine.handle(.tick, now: at(0.35))
        #expect(actions.contains(.plan(inFlight: 2, forgetStart: true)), "a refreshing page forgets where plans start")
    }

    @Test func aShortQueueIsPlannedForAtOnce() {
        var (machine, _) = planned([job(1)], at: page(1))
        #expect(
            machine.handle(.pagesCommitted(refreshing: false), now: at(0.01)) == [
                .plan(inFlight: 1, forgetStart: false)
            ])
    }

    @Test func writtenPicturesAreRecordedTogether() {
        var (machine, _) = planned(jobs(1...6), at: page(1), concurrency: 3)
        var actions = send(.ended(id: 1, .written(picture(1))), to: &machine, at: 0.01)
        actions += send(.ended(id: 2, .written(picture(2))), to: &machine, at: 0.02)
        #expect(records(actions).isEmpty, "others are still downloading")
        actions = send(.tick, to: &machine, at: 0.3)
        #expect(records(actions) == [[1, 2]], "a quarter second on, the two are recorded")
        // One batch at a time; the next waits for the record to finish.
        _ = send(.ended(id: 3, .written(picture(3))), to: &machine, at: 0.35)
        #expect(records(send(.tick, to: &machine, at: 0.7)).isEmpty)
        let done = send(.recorded(failure: nil), to: &machine, at: 0.71)
        #expect(done.contains(.report(.cached(url: "http://h/1.png", bytes: 100, feedID: 1))))
        #expect(done.contains(.report(.cached(url: "http://h/2.png", bytes: 100, feedID: 1))))
        #expect(records(done).isEmpty, "a quarter second after the last record")
        #expect(records(send(.tick, to: &machine, at: 0.96)) == [[3]])
    }

    @Test func aFullBatchIsRecordedAtOnce() {
        var (machine, _) = planned(jobs(1...200), at: page(1), concurrency: 64)
        var recorded: [[Int64]] = []
        for id in Int64(1)...Int64(Machine.batch) {
            recorded += records(send(.ended(id: id, .written(picture(id))), to: &machine, at: 0.001, due: []))
        }
        #expect(recorded == [Array(1...Int64(Machine.batch))])
    }

    @Test func aBatchThatCouldNotBeRecordedFailsEachPictureForALaterPull() {
        var (machine, _) = planned([job(1)], at: page(1))
        let record = send(.ended(id: 1, .written(picture(1))), to: &machine, at: 0.01)
        #expect(records(record) == [[1]], "nothing else running: at once")
        let failed = send(.recorded(failure: "cannot write the picture: disk full"), to: &machine, at: 0.02)
        #expect(failed.contains(.fail(job(1), reason: "cannot write the picture: disk full", permanent: false)))
    }

    // MARK: The end

    @Test func theRunEndsOncePagingIsOverAndNothingDueIsLeft() {
        var (machine, _) = planned([job(1)], at: page(2))
        let last = send(.pagingFinished, to: &machine, at: 0.01)
        #expect(last.contains(.plan(inFlight: 1, forgetStart: false)), "one last plan")
        #expect(!last.contains { if case .finish = $0 { true } else { false } }, "one still running")
        _ = send(.ended(id: 1, .written(picture(1))), to: &machine, at: 0.02)
        // A finished record may have made room: one more plan, which finds nothing; then the end.
        let end = send(.recorded(failure: nil), to: &machine, at: 0.03)
        #expect(end.contains(.plan(inFlight: 0, forgetStart: false)))
        #expect(end.last == .finish(lastPosition: page(2)))
        #expect(machine.handle(.tick, now: at(1)).isEmpty, "nothing after the end")
    }

    @Test func aClientShutDownEndsTheRunWithNoFailureAndStartsNothingMore() {
        var (machine, _) = planned(jobs(1...5), at: page(1))
        let first = machine.handle(.ended(id: 1, .cancelled), now: at(0.01))
        #expect(started(first).isEmpty)
        #expect(!first.contains { if case .fail = $0 { true } else { false } })
        let end = machine.handle(.ended(id: 2, .cancelled), now: at(0.02))
        #expect(end == [.finish(lastPosition: page(1))], "what was cut off stays due")
    }

    // MARK: Backoff

    @Test func failedPicturesBackOff() {
        #expect(Machine.retryDelay(permanent: true, attempts: 0) == 3 * 86_400)
        #expect(Machine.retryDelay(permanent: false, attempts: 0) == 60)
        #expect(Machine.retryDelay(permanent: false, attempts: 1) == 120)
        #expect(Machine.retryDelay(permanent: false, attempts: 5) == 1920)
        #expect(Machine.retryDelay(permanent: false, attempts: 40) == 86_400, "at most a day")
        #expect(Machine.retryDelay(permanent: false, attempts: -3) == 60, "a damaged count is no shorter")
    }

    @Test func aFailedPictureIsNotAskedForAgainInTheSameRun() {
        var (machine, _) = planned([job(1), job(2)], at: page(1))
        // The store may still list it as due when a plan races its record.
        let actions = send(
            .ended(id: 1, .failed("timed out", permanent: false)), to: &machine, at: 0.01,
            due: [job(1), job(3)])
        #expect(actions.contains(.fail(job(1), reason: "timed out", permanent: false)))
        #expect(started(actions) == [3])
        #expect(machine.hasTried(1) && !machine.queue.contains(job(1)))
    }

    // MARK: Budget and eviction

    func room(budget: Int64, totals: CacheTotals, mode: PrefetchMode = .all) -> CacheRoom {
        CacheRoom(budget: budget, pagesAhead: 1, mode: mode, totals: totals)
    }

    @Test func aCacheWithinItsBudgetIsNotEvictedAndTakesEveryPlannedPicture() async {
        var cache = room(budget: 10_000, totals: CacheTotals(bytes: 1000, count: 10))
        var evictions = 0
        await cache.evictIfOver(around: page(1)) { _ in
            evictions += 1
            return nil
        }
        #expect(evictions == 0)
        let admitted = await cache.admit(jobs(1...5), around: page(1), inFlight: 0, planSize: 5) { _ in
            Issue.record("no reach needed: a plan's worth fits")
            return nil
        }
        #expect(admitted.count == 5)
    }

    @Test func anEvictionThatLeavesTheCacheOverBudgetIsNotTriedAgainUntilTheReaderMoves() async {
        var cache = room(budget: 1000, totals: CacheTotals(bytes: 5000, count: 50))
        var evictions = 0
        let evict: (ReadingPosition) -> CacheBudget.Eviction? = { _ in
            evictions += 1
            return CacheBudget.Eviction(count: 10, bytes: 1000, nearest: 40, left: CacheTotals(bytes: 4000, count: 40))
        }
        await cache.evictIfOver(around: page(1), evict)
        await cache.evictIfOver(around: page(1), evict)
        #expect(evictions == 1, "only the window's pictures are left")
        #expect(cache.totals == CacheTotals(bytes: 4000, count: 40))
        // Nothing outside the window is worth fetching now.
        let admitted = await cache.admit([job(5), job(100)], around: page(1), inFlight: 0, planSize: 2) { _ in 99 }
        #expect(admitted.map(\.id) == [5], "row 5 is in the window (rows 0..<20); row 100 would be evicted at once")
        cache.readerMoved()
        await cache.evictIfOver(around: page(2), evict)
        #expect(evictions == 2)
    }

    @Test func pastTheRoomLeftOnlyPicturesNearerThanTheFarthestCachedOneAreFetched() async {
        // Room for two more pictures of the average size (100 bytes); the farthest cached picture
        // eviction could take is 50 rows away.
        var cache = room(budget: 1200, totals: CacheTotals(bytes: 1000, count: 10))
        let planned = [job(30), job(31), job(40), job(70), job(75)]
        let admitted = await cache.admit(planned, around: page(1), inFlight: 0, planSize: 5) { _ in 50 }
        #expect(admitted.map(\.id) == [30, 31, 40], "two fit; 40 is nearer than 50 rows; 70 and 75 are not")
    }
}
