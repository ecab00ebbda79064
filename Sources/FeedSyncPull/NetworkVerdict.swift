import FeedSyncModel
import FeedSyncStore
import FeedSyncTransport
import Foundation
import Synchronization

/// What one run has learnt of the network: whether any server answered, and which hosts gave no
/// answer at all (no name, refused, unreachable, no connection in time, closed before any byte).
/// A machine offline fails every request that way, and fast: when no server has answered and three
/// hosts (or every host of the run, if fewer) have failed so, the run is offline and asks no more.
/// A host that gave no answer is not asked again in the run, nor one that took the connection and
/// then sent nothing in time (a stalled server, which shows the network is there); the run's other
/// feeds go on. Pure; `RunNetwork` shares one between a run's feeds.
public struct NetworkVerdict: Sendable, Equatable {
    /// Distinct hosts among the feeds the run asks.
    public let hosts: Int
    public private(set) var answered = false
    /// The hosts that gave no answer, in the order they were found, and how.
    public private(set) var silent: [Silence] = []
    /// Hosts that took the connection and sent nothing before the time ran out.
    public private(set) var stalled: Set<String> = []

    public init(hosts: Int) {
        self.hosts = hosts
    }

    public enum Decision: Sendable, Equatable {
        case ask
        /// The host gave no answer earlier in this run: not asked again.
        case silentHost
        /// No server answered this run: nothing more is asked.
        case offline
    }

    public var offline: Bool { !answered && !silent.isEmpty && silent.count >= min(3, hosts) }

    public func decision(host: String) -> Decision {
        if offline { return .offline }
        return stalled.contains(host) || silence(of: host) != nil ? .silentHost : .ask
    }

    /// How `host` gave no answer in this run, if it gave none.
    public func silence(of host: String) -> Silence? { silent.first { $0.host == host } }

    /// A server answered (any status).
    public mutating func heard(from host: String) {
        answered = true
        silent.removeAll { $0.host == host }
    }

    /// A request to `host` got no answer, its one retry included (or its one wait, timed out).
    public mutating func noAnswer(from host: String, _ how: TransportError.NoAnswer) {
        if silence(of: host) == nil { silent.append(Silence(host: host, how: how)) }
    }

    /// `host` took the connection and sent nothing in time: the network is there, the host is not
    /// asked again in this run.
    public mutating func stalled(_ host: String) {
        answered = true
        stalled.insert(host)
    }

    /// The server `url` names: its host in lower case, and its port when it gives one (two
    /// servers on one machine are two hosts here); the URL itself when it has no host.
    public static func host(of url: String) -> String {
        guard let components = URLComponents(string: url), let host = components.host?.lowercased() else { return url }
        return components.port.map { "\(host):\($0)" } ?? host
    }
}

/// One run's `NetworkVerdict`, shared by its feeds, and the outcomes of the feeds no server
/// answered, held until the run knows whether it was offline: an offline run changes nothing.
/// Until a host has answered, as many requests go to it as it gets connections at once (the
/// per-host limit: more would only queue for one); the others wait for their outcome, so a host
/// that accepts and never answers costs the run one wait, not one per feed.
public final class RunNetwork: Sendable {
    private typealias Waiting = CheckedContinuation<NetworkVerdict.Decision?, Never>

    private struct State {
        var verdict: NetworkVerdict
        var held: [(feedID: Int64, record: PullRecord)] = []
        /// Hosts not heard from yet with requests out: how many, and the requests waiting.
        var probing: [String: (out: Int, waiting: [Waiting])] = [:]
        var heard: Set<String> = []
    }

    private let state: Mutex<State>
    private let perHost: Int

    public init(hosts: Int, perHost: Int) {
        state = Mutex(State(verdict: NetworkVerdict(hosts: hosts)))
        self.perHost = max(1, perHost)
    }

    public var offline: Bool { state.withLock { $0.verdict.offline } }

    /// Whether to ask `url` now: after waiting, while its host has not answered yet and has as
    /// many requests out as it takes. An `.ask` before the host was heard must be followed by
    /// `heard`, `noAnswer` or `release`.
    func admit(_ url: String) async -> NetworkVerdict.Decision {
        let host = NetworkVerdict.host(of: url)
        while true {
            // nil: a request to the host had its outcome; look again.
            let decided: NetworkVerdict.Decision? = await withCheckedContinuation { continuation in
                let decided: NetworkVerdict.Decision? = state.withLock { state in
                    let decision = state.verdict.decision(host: host)
                    if decision != .ask || state.heard.contains(host) { return decision }
                    let out = state.probing[host]?.out ?? 0
                    guard out >= perHost else {
                        state.probing[host, default: (0, [])].out = out + 1
                        return .ask
                    }
                    state.probing[host]!.waiting.append(continuation)
                    return nil
                }
                if let decided { continuation.resume(returning: decided) }
            }
            if let decided { return decided }
        }
    }

    /// A server answered `url` (any status).
    func heard(from url: String) {
        let host = NetworkVerdict.host(of: url)
        wake(
            state.withLock { state in
                state.verdict.heard(from: host)
                state.heard.insert(host)
                return state.probing.removeValue(forKey: host)?.waiting ?? []
            })
    }

    /// `url` got no answer, its retry included.
    func noAnswer(from url: String, _ how: TransportError.NoAnswer) {
        let host = NetworkVerdict.host(of: url)
        wake(
            state.withLock { state in
                state.verdict.noAnswer(from: host, how)
                return state.probing.removeValue(forKey: host)?.waiting ?? []
            })
    }

    /// `url`'s server took the connection and sent nothing in time.
    func stalled(_ url: String) {
        let host = NetworkVerdict.host(of: url)
        wake(
            state.withLock { state in
                state.verdict.stalled(host)
                return state.probing.removeValue(forKey: host)?.waiting ?? []
            })
    }

    /// How `url`'s host gave no answer in this run, if it gave none.
    func silence(of url: String) -> Silence? {
        let host = NetworkVerdict.host(of: url)
        return state.withLock { $0.verdict.silence(of: host) }
    }

    /// A request to a host not heard from ended without an outcome (cancelled, a local
    /// failure): one waiting goes in its place.
    func release(_ url: String) {
        let host = NetworkVerdict.host(of: url)
        wake(
            state.withLock { state in
                guard var probing = state.probing[host] else { return [] }
                probing.out -= 1
                let woken = probing.waiting.isEmpty ? [] : [probing.waiting.removeFirst()]
                state.probing[host] = probing.out <= 0 && probing.waiting.isEmpty ? nil : probing
                return woken
            })
    }

    private func wake(_ waiting: [Waiting]) {
        for continuation in waiting { continuation.resume(returning: nil) }
    }

    func hold(_ record: PullRecord, of feedID: Int64) { state.withLock { $0.held.append((feedID, record)) } }

    /// The outcomes held; to be recorded unless the run was offline.
    public func takeHeld() -> [(feedID: Int64, record: PullRecord)] {
        state.withLock { state in
            defer { state.held = [] }
            return state.held
        }
    }
}
