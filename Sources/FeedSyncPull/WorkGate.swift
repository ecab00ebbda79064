import FeedSyncFeed
import FeedSyncMarkup
import FeedSyncModel
import FeedSyncStore
import FeedSyncTransport
import Foundation
import Synchronization

/// Runs `body` on a thread of its own and returns what it returns: for work that blocks (reading
/// and parsing a long file), which must not hold a thread of the cooperative pool. `niceness` is
/// added to that thread's (on Linux, `setpriority` of the calling thread is its own alone).
func onOwnThread<T: Sendable>(niceness: Int32 = 0, _ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread {
            if niceness != 0 {
                let which = __priority_which_t(PRIO_PROCESS.rawValue)
                setpriority(which, 0, min(19, getpriority(which, 0) + niceness))
            }
            continuation.resume(with: Result { try body() })
        }.start()
    }
}

/// At most `width` pieces of work at once; the others wait their turn, first come first served.
/// A pull's feeds read the documents they hold in memory through one as wide as the machine has
/// cores, each on a thread of its own below the store writer's priority: the writer is the
/// critical path of a many-feed pull, and reading beside it at its own priority slowed it, one
/// document at a time left it waiting (BENCHMARKS.md, P3). A long document read from its file
/// has a thread of its own and commits as it reads, so it does not take a turn.
public final class WorkGate: Sendable {
    private struct State {
        var free: Int
        var waiting: [CheckedContinuation<Void, Never>] = []
    }

    private let state: Mutex<State>

    public init(width: Int) {
        state = Mutex(State(free: max(1, width)))
    }

    func run<T>(_ work: () async throws -> T) async rethrows -> T {
        await withCheckedContinuation { (turn: CheckedContinuation<Void, Never>) in
            let now = state.withLock { state in
                guard state.free == 0 else {
                    state.free -= 1
                    return true
                }
                state.waiting.append(turn)
                return false
            }
            if now { turn.resume() }
        }
        defer {
            let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
                guard !state.waiting.isEmpty else {
                    state.free += 1
                    return nil
                }
                return state.waiting.removeFirst()
            }
            next?.resume()
        }
        return try await work()
    }
}
