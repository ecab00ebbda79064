import FeedSyncKit
import FeedSyncSync
import Synchronization

/// What a pull shows while it runs: the progress line, a failed feed at once, every event with
/// `--verbose`, and the first local fault (the pull goes on, and exits 74).
final class PullReporting: Sendable {
    let progress: ProgressLine?
    let verbose: Bool
    /// Whether a feed's failure is said as it happens.
    let sayFailures: Bool
    private let localFault = Mutex<String?>(nil)

    init(progress: ProgressLine?, verbose: Bool, sayFailures: Bool = true) {
        self.progress = progress
        self.verbose = verbose
        self.sayFailures = sayFailures
    }

    var hadLocalFault: Bool { localFault.withLock { $0 != nil } }

    func update(_ update: FeedSync.PullUpdate) {
        switch update {
        case .feed(let event):
            progress?.record(event)
            if verbose { Pull.log(event) }
        case .picture(let event):
            if case .localFault(let reason) = event,
                localFault.withLock({ fault in
                    defer { fault = fault ?? reason }
                    return fault == nil
                })
            {
                progress?.clear()
                complain(reason)
            }
            progress?.record(event)
            if verbose { Pull.log(event) }
        case .finished(_, .failure(let error)):
            guard !Task.isCancelled, sayFailures else { return }  // interrupted: said once, after
            progress?.clear()
            complain(error.message)
        case .finished:
            break
        }
    }
}
