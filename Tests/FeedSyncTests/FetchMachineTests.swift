import FeedSyncModel
import FeedSyncTransport
import Foundation
import Testing

@testable import FeedSyncPull

/// One request's attempts, decided by `FetchMachine` without a network: each decision it makes,
/// from synthetic answers and failures.
@Suite struct FetchMachineTests {
    static let url = "http://h.example/feed"
    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    static let policy = RetryPolicy(maxAttempts: 4, baseDelay: 1, maxDelay: 30, maxRetryAfter: 120)

    static func answer(_ status: Int, headers: [String: String] = [:]) -> FetchMachine.Event {
        .answered(HTTPResponse(status: status, headers: headers, body: Data("x".utf8), effectiveURL: url))
    }

    static func failure(
        _ kind: TransportError.Kind, answered: Bool = false, noAnswer: NoAnswer? = nil
    ) -> FetchMachine.Event {
        .failed(TransportError(kind: kind, url: url, detail: "\(kind)", answered: answered, noAnswer: noAnswer))
    }

    /// A started machine, asked once.
    static func asking() -> FetchMachine {
        var machine = FetchMachine(url: url, policy: policy)
        #expect(Self.kinds(machine.handle(.admitted(.ask, silence: nil), now: now, jitter: 0)) == ["ask"])
        return machine
    }

    /// The actions by kind, and the values tests look at.
    static func kinds(_ actions: [FetchMachine.Action]) -> [String] {
        actions.map { action in
            switch action {
            case .ask: "ask"
            case .log(let made): "log \(made.status.map(String.init) ?? "-")"
            case .note(let note): "note \(note)"
            case .report: "report"
            case .wait(let seconds): "wait \(seconds)"
            case .deliver(let response): "deliver \(response.status)"
            case .fail: "fail"
            }
        }
    }

    static func failed(_ actions: [FetchMachine.Action]) -> PullFailure? {
        for case .fail(let failure) in actions { return failure }
        return nil
    }

    @Test func anOfflineRunOrASilentHostIsNotAsked() {
        var offline = FetchMachine(url: Self.url, policy: Self.policy)
        let none = offline.handle(.admitted(.offline, silence: nil), now: Self.now, jitter: 0)
        #expect(Self.kinds(none) == ["fail"])
        #expect(
            Self.failed(none)?.unanswered == true
                && Self.failed(none)?.error.message.contains("no server answered") == true)
        var silent = FetchMachine(url: Self.url, policy: Self.policy)
        let how = Silence(host: "h.example", how: .refused)
        let skipped = silent.handle(.admitted(.silentHost, silence: how), now: Self.now, jitter: 0)
        #expect(Self.failed(skipped)?.silence == how)
        #expect(Self.failed(skipped)?.error.message.hasSuffix("earlier in this run (refused)") == true)
    }

    @Test func anAnswerThatWillNotChangeIsHandedOnAndTheHostHeard() {
        var machine = Self.asking()
        #expect(
            Self.kinds(machine.handle(Self.answer(200), now: Self.now, jitter: 0)) == [
                "note heard", "log 200", "deliver 200",
            ])
        var missing = Self.asking()
        #expect(
            Self.kinds(missing.handle(Self.answer(404), now: Self.now, jitter: 0)) == [
                "note heard", "log 404", "deliver 404",
            ])
    }

    @Test func aTransientAnswerIsAskedAgainAfterTheBackoffUpToTheAttempts() {
        var machine = Self.asking()
        // Attempt 1: a step of 1 s, its upper half; attempt 2: 2 s; attempt 3: 4 s.
        for (attempt, delay) in [(1, 1.0), (2, 2.0), (3, 4.0)] {
            let actions = machine.handle(Self.answer(503), now: Self.now, jitter: 1)
            #expect(Self.kinds(actions) == ["note heard", "log 503", "report", "wait \(delay)"], "attempt \(attempt)")
            #expect(Self.kinds(machine.handle(.waited, now: Self.now, jitter: 1)) == ["ask"])
        }
        #expect(machine.attempt == 4)
        let last = machine.handle(Self.answer(503), now: Self.now, jitter: 1)
        #expect(Self.kinds(last) == ["note heard", "log 503", "fail"])
        let failure = Self.failed(last)
        #expect(failure?.error.message == "\(Self.url): the server answered 503, 4 attempts")
        #expect(failure?.status == 503 && failure?.savesPlace == true && failure?.unanswered == false)
        // Jitter 0: the lower end of the upper half.
        var low = Self.asking()
        #expect(Self.kinds(low.handle(Self.answer(500), now: Self.now, jitter: 0)).last == "wait 0.5")
    }

    @Test func retryAfterIsWaitedForExactlyAndNotWhenItIsTooLong() {
        var machine = Self.asking()
        let soon = machine.handle(Self.answer(429, headers: ["retry-after": "10"]), now: Self.now, jitter: 0)
        #expect(Self.kinds(soon).last == "wait 10.0")
        var patient = Self.asking()
        let long = patient.handle(Self.answer(503, headers: ["retry-after": "3600"]), now: Self.now, jitter: 0)
        #expect(Self.kinds(long) == ["note heard", "log 503", "fail"], "not waited for")
        let failure = Self.failed(long)
        #expect(failure?.nextRetryAt == Self.now.addingTimeInterval(3600) && failure?.retryAfter == 3600)
        #expect(failure?.error.message.contains("asked to wait 3600 s") == true)
    }

    @Test func noAnswerIsAskedOnceMoreSoonThenNotedAsTheHostsSilence() {
        var machine = Self.asking()
        let first = machine.handle(Self.failure(.unreachable, noAnswer: .noSuchHost), now: Self.now, jitter: 1)
        #expect(Self.kinds(first) == ["log -", "report", "wait 1.0"], "within 2 s, nothing said of the host yet")
        _ = machine.handle(.waited, now: Self.now, jitter: 1)
        let second = machine.handle(Self.failure(.unreachable, noAnswer: .noSuchHost), now: Self.now, jitter: 1)
        #expect(Self.kinds(second) == ["log -", "note noAnswer(no such host)", "fail"])
        let failure = Self.failed(second)
        #expect(failure?.unanswered == true && failure?.silence == Silence(host: "h.example", how: .noSuchHost))
        // A long backoff is cut to 2 s for no answer.
        var slow = FetchMachine(url: Self.url, policy: RetryPolicy(maxAttempts: 4, baseDelay: 10))
        _ = slow.handle(.admitted(.ask, silence: nil), now: Self.now, jitter: 0)
        #expect(
            Self.kinds(slow.handle(Self.failure(.unreachable, noAnswer: .refused), now: Self.now, jitter: 1)).last
                == "wait 2.0")
    }

    @Test func noConnectionInTimeIsNotAskedAgain() {
        var machine = Self.asking()
        let timedOut = machine.handle(
            Self.failure(.timedOut, noAnswer: .timedOut(seconds: 10)), now: Self.now, jitter: 0)
        #expect(Self.kinds(timedOut) == ["log -", "note noAnswer(timed out after 10 s)", "fail"])
        // Connected, then silent: the network is there, the host slow; not its silence.
        var stalled = Self.asking()
        let silent = stalled.handle(Self.failure(.timedOut), now: Self.now, jitter: 0)
        #expect(Self.kinds(silent) == ["log -", "note stalled", "fail"])
        #expect(Self.failed(silent)?.unanswered == true && Self.failed(silent)?.silence == nil)
    }

    @Test func aFailureAfterTheServerAnsweredIsRetriedAsAnAnswerIs() {
        var machine = Self.asking()
        let cut = machine.handle(Self.failure(.interrupted, answered: true), now: Self.now, jitter: 1)
        #expect(Self.kinds(cut) == ["log -", "note heard", "report", "wait 1.0"])
        for _ in 2...3 {
            _ = machine.handle(.waited, now: Self.now, jitter: 1)
            _ = machine.handle(Self.failure(.interrupted, answered: true), now: Self.now, jitter: 1)
        }
        _ = machine.handle(.waited, now: Self.now, jitter: 1)
        #expect(
            Self.failed(machine.handle(Self.failure(.interrupted, answered: true), now: Self.now, jitter: 1))?
                .unanswered == false)
    }

    @Test func aLocalFileOrAnUnusableAnswerFailsAtOnce() {
        var local = Self.asking()
        let disk = local.handle(Self.failure(.localFile), now: Self.now, jitter: 0)
        #expect(Self.kinds(disk) == ["log -", "note release", "fail"] && Self.failed(disk)?.error.kind == .local)
        var large = Self.asking()
        let tooLarge = large.handle(Self.failure(.tooLarge, answered: true), now: Self.now, jitter: 0)
        #expect(Self.kinds(tooLarge) == ["log -", "note heard", "fail"] && Self.failed(tooLarge)?.error.kind == .data)
        var redirected = Self.asking()
        let refused = redirected.handle(Self.failure(.refusedRedirect), now: Self.now, jitter: 0)
        #expect(Self.kinds(refused) == ["log -", "note release", "fail"])
        #expect(Self.failed(refused)?.error.message == "\(Self.url) could not be used: refusedRedirect")
    }

    @Test func aCancelledRequestOrWaitIsAnInterruptionThatTellsNothingOfTheHost() {
        var asking = Self.asking()
        let cancelled = asking.handle(.cancelled, now: Self.now, jitter: 0)
        #expect(Self.kinds(cancelled) == ["note release", "fail"] && Self.failed(cancelled)?.interrupted == true)
        var waiting = Self.asking()
        _ = waiting.handle(Self.answer(503), now: Self.now, jitter: 0)
        #expect(Self.failed(waiting.handle(.cancelled, now: Self.now, jitter: 0))?.interrupted == true)
    }
}
