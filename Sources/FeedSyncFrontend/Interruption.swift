import ArgumentParser
import Dispatch
import Foundation
import Synchronization

/// SIGINT and SIGTERM during a pull: the first cancels the work, so each feed stops between
/// transactions (a page is committed whole or not at all) and records how far it got; a second
/// ends the process at once, as the default would.
package final class Interruption {
    private let sources: [any DispatchSourceSignal]
    private let caught = Caught()

    package var happened: Bool { caught.flag.withLock { $0 } }

    private final class Caught: Sendable {
        let flag = Mutex(false)
    }

    /// Calls `cancel` (on another thread) at the first SIGINT or SIGTERM until `stop`.
    package init(cancel: @escaping @Sendable () -> Void) {
        var sources: [any DispatchSourceSignal] = []
        let caught = caught
        for number in [SIGINT, SIGTERM] {
            signal(number, SIG_IGN)  // delivered to the source instead
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                let first = caught.flag.withLock { caught in
                    defer { caught = true }
                    return !caught
                }
                for other in [SIGINT, SIGTERM] { signal(other, SIG_DFL) }  // a second one ends the process
                if first { cancel() }
            }
            source.resume()
            sources.append(source)
        }
        self.sources = sources
    }

    /// Stops watching: the signals end the process again, as by default.
    package func stop() {
        for source in sources { source.cancel() }
        for number in [SIGINT, SIGTERM] { signal(number, SIG_DFL) }
    }
}

/// Runs `work` in a task of its own that the first SIGINT or SIGTERM cancels (a second ends the
/// process, `Interruption`): what it gave, nil when it was interrupted and gave up, and whether it
/// was interrupted. An error after an interrupt is the interrupt's: not thrown.
package func interruptible<T: Sendable>(_ work: @escaping @Sendable () async throws -> T) async throws -> (
    value: T?, interrupted: Bool
) {
    let task = Task { try await work() }
    let interruption = Interruption { task.cancel() }
    defer { interruption.stop() }
    do {
        let value = try await task.value
        return (value, interruption.happened)
    } catch  where interruption.happened {
        return (nil, true)
    }
}

/// Ends a command that was interrupted the one way every command does: one line saying what
/// it kept, exit 75 (the work can be done again, and goes on from there).
package func interrupted(_ kept: String) -> ExitCode {
    complain("interrupted; \(kept)")
    return ExitCode(Exit.tempFail)
}
