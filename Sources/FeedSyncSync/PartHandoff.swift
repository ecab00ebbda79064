import Foundation

/// Parts of a long document handed from the thread that parses it to the one that commits them,
/// at most `capacity` waiting, so parsing part n + 1 overlaps committing part n and memory still
/// holds a bounded number of parts.
final class PartHandoff<Part: Sendable>: @unchecked Sendable {
    private let condition = NSCondition()
    private let capacity: Int
    // Guarded by `condition`.
    private var waiting: [Part] = []
    private var finished = false
    private var stopped = false

    init(capacity: Int) {
        self.capacity = capacity
    }

    /// Producer: waits for room. `false` once the consumer has stopped; the producer should end.
    func put(_ part: Part) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while waiting.count >= capacity && !stopped { condition.wait() }
        guard !stopped else { return false }
        waiting.append(part)
        condition.broadcast()
        return true
    }

    /// Producer: no more parts will come.
    func finish() {
        condition.lock()
        finished = true
        condition.broadcast()
        condition.unlock()
    }

    /// Consumer: the next part, or `nil` once the producer has finished and every part was taken.
    func take() -> Part? {
        condition.lock()
        defer { condition.unlock() }
        while waiting.isEmpty && !finished { condition.wait() }
        guard !waiting.isEmpty else { return nil }
        condition.broadcast()
        return waiting.removeFirst()
    }

    /// Consumer: takes no more parts, and returns once the producer has finished.
    func stop() {
        condition.lock()
        defer { condition.unlock() }
        stopped = true
        waiting.removeAll()
        condition.broadcast()
        while !finished { condition.wait() }
    }
}
