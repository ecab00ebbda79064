import Foundation

/// A failure of the local database or file system.
public struct StoreError: Error, Sendable, CustomStringConvertible {
    public enum Kind: Sendable {
        /// The database or the disk failed.
        case failure
        /// Another process held a lock on the database for longer than the busy timeout.
        case locked
        /// The database was written by a newer feedsync (a migration this version does not know).
        case newer
    }

    public var kind: Kind
    public var message: String
    public init(_ message: String, kind: Kind = .failure) {
        self.message = message
        self.kind = kind
    }
    public var description: String { message }
}

/// Why a document could not be used. `reason` is one plain sentence fragment for the user.
public struct FeedError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What was wrong, naming the line for XML.
    public var reason: String
    /// The document is not of the format chosen for the feed (`--format`): the choice is wrong,
    /// whichever page showed it.
    public var wrongFormat = false
    public init(_ reason: String, wrongFormat: Bool = false) {
        self.reason = reason
        self.wrongFormat = wrongFormat
    }
    public var description: String { reason }
}

/// A failure a user has to hear about, sorted by what the command line should exit with.
public struct SyncError: Error, Sendable, CustomStringConvertible {
    public enum Kind: Sendable, Comparable {
        /// Worth trying again later: the network, the server or the lock (exit 75).
        case transient
        /// The server sent something unusable (exit 65).
        case data
        /// The local database or file system failed (exit 74).
        case local
        /// The command was used wrongly (exit 64).
        case usage
        /// A server refused the account's user name, password or API access (exit 77).
        case denied
    }

    public var kind: Kind
    /// One plain sentence: what failed, where, and what to do.
    public var message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { message }

    /// Whether the next request to the same server would fail as this one did: the server gone,
    /// or the account refused.
    public var isTheServers: Bool { kind == .transient || kind == .denied }
}

extension SyncError.Kind {
    /// How a pull that failed so ended, as the feed records it.
    public var outcome: PullOutcome {
        switch self {
        case .transient: .transient
        case .data: .data
        case .local, .usage, .denied: .local
        }
    }
}
