// P10's ceiling: the least a Swift program on Linux can do once it has run one task on the global
// executor, which is to sleep. libdispatch's thread pool, which runs Swift's tasks there, starts a
// one-second timer on its manager thread with its first worker (the workqueue monitor) and never
// stops it; scripts/bench counts this program's wake-ups beside an idle `feedsync serve`'s.
import Foundation

let ran = DispatchSemaphore(value: 0)
Task { ran.signal() }
ran.wait()
while true { sleep(3600) }
