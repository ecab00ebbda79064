import Foundation

/// What happens during a pull, for `--verbose` and progress output.
public enum PullEvent: Sendable {
    case notModified(url: String)
    /// A 200 whose body is the head document read last time: not parsed again.
    case unchanged(url: String)
    /// A page was stored: of its `items`, `new` were added and `refreshed` (stored before) were
    /// rewritten in place; `skipped` entries made no item (nothing usable, or an id or URL over
    /// its limit).
    case page(url: String, number: Int, items: Int, new: Int, refreshed: Int, skipped: Int)
    case retrying(url: String, attempt: Int, delay: Double, reason: String)
    case skipped(url: String, PullSkip)
    case endless(url: String, reason: String)
    /// The server refused a saved link (status 4xx); the walk started again from the head.
    case linkRefused(url: String, status: Int)
    /// A document was not well-formed; its items were read past the damage (`where`: line, column, reason).
    case malformed(url: String, where: String)
    /// A request for a page of the feed at `url` went out; then, for a long body, its bytes so far;
    /// then the answer's body, `bytes` long.
    case fetching(url: String)
    case receiving(url: String, bytes: Int)
    case fetched(url: String, bytes: Int)
}

/// What one feed's pull did, whether it succeeded or not.
public struct PullReport: Sendable {
    public var url: String
    /// Requests made, retries included (`requests.count`).
    public var requests: [Request] = []
    public var newItems = 0
    public var refreshedItems = 0
    public var finish: PullFinish?
    /// The feed was not asked for, and why.
    public var skipped: PullSkip?
    /// Where the last malformed document of this pull was damaged, if one was.
    public var malformed: String?
    /// When the feed is due again, and why; nil when it was skipped or is gone.
    public var due: DueTime?
    /// The server answered 410 Gone.
    public var gone = false
    /// The feed URL moved there (a permanent redirect seen on two pulls in a row).
    public var movedTo: String?
    /// Why the pull failed; nil when it did not.
    public var error: SyncError?
    /// The feed was subscribed by this run and, its first pull failing for good, not kept.
    public var forgotten = false
    /// It failed without any answer from a server (the network gone, or the host): the feed stays
    /// due for the next pull unless that happened too often in a row (`Schedule.afterNoAnswer`).
    public var unanswered = false
    /// No server answered in the whole run, which then stopped asking and recorded nothing.
    public var offline = false
    /// The feed's host gave no answer, and how (nil when it answered, or took the connection).
    public var silence: Silence?
    /// Why the walk into the feed's history stopped in this pull (the feed itself is fine).
    public var history: String?
    /// The pictures of the feed's items the run stored (and failed), counted by the first row
    /// that shows each.
    public var pictures = PictureTally()

    public init(url: String, skipped: PullSkip? = nil) {
        self.url = url
        self.skipped = skipped
    }

    /// One request: its URL, the status answered (nil: no answer, `failure` says why) and the
    /// body's bytes.
    public struct Request: Sendable {
        public var url: String
        public var status: Int?
        public var bytes: Int
        public var failure: String?

        public init(url: String, status: Int?, bytes: Int, failure: String? = nil) {
            self.url = url
            self.status = status
            self.bytes = bytes
            self.failure = failure
        }
    }
}

/// A host that gave no answer in a run, and how: what the offline line and `pull --json` name.
public struct Silence: Sendable, Equatable {
    public var host: String
    public var how: NoAnswer

    public init(host: String, how: NoAnswer) {
        self.host = host
        self.how = how
    }
}

public struct DueTime: Sendable, Equatable {
    public var at: Date
    /// In words, for `status` and `pull --verbose`: "ttl 60 min".
    public var reason: String

    public init(
        at: Date, reason: String
    ) {
        self.at = at
        self.reason = reason
    }
}

/// How a pull treats a feed's due time.
public enum PullAsking: Sendable {
    /// A plain `pull`: only feeds that are due.
    case due
    /// `pull --feed`: asked anyway, but not before a `Retry-After`.
    case named
    /// `pull --force`: asked, whatever the server said.
    case forced
}

/// Why a feed is not asked for now.
public enum PullSkip: Sendable, Equatable {
    /// 410 Gone, then.
    case gone(Date)
    /// The server's `Retry-After` runs until then.
    case retryAfter(Date)
    /// Not due until then, for this reason.
    case notDue(Date, String)
}

public enum PullFinish: Sendable, Equatable {
    /// Every walk ran to its end.
    case complete
    /// `--max-pages` ran out; the next pull continues from the saved cursor.
    case budgetSpent
    /// The feed would not end (same page again, or pages far past its total). The backfill is
    /// marked done so later pulls don't repeat it.
    case endless(String)
}

/// The ways a server can give no answer, as the offline line names them.
public enum NoAnswer: Sendable, Hashable, CustomStringConvertible {
    case noSuchHost
    case refused
    /// No route to the host or its network.
    case unreachable
    /// No connection within this many seconds.
    case timedOut(seconds: Int)
    /// Connected, then closed or reset before any byte of a response.
    case closed

    public var description: String {
        switch self {
        case .noSuchHost: "no such host"
        case .refused: "refused"
        case .unreachable: "unreachable"
        case .timedOut(let seconds): "timed out after \(seconds) s"
        case .closed: "closed before answering"
        }
    }
}

/// When to try a failed request again: exponential backoff with jitter, honouring `Retry-After`.
public struct RetryPolicy: Sendable {
    /// Attempts per request, the first included.
    public var maxAttempts: Int
    /// The first backoff; each further one doubles, up to `maxDelay`.
    public var baseDelay: Double
    public var maxDelay: Double
    /// A `Retry-After` longer than this is not waited for: the pull saves its place, exits 75 and
    /// later pulls skip the feed until then.
    public var maxRetryAfter: Double

    public init(maxAttempts: Int = 5, baseDelay: Double = 1, maxDelay: Double = 30, maxRetryAfter: Double = 120) {
        self.maxAttempts = maxAttempts
        self.baseDelay = baseDelay
        self.maxDelay = maxDelay
        self.maxRetryAfter = maxRetryAfter
    }

    /// Seconds to wait before attempt `attempt + 1` (attempts count from 1): a point in the upper
    /// half of the exponential step, `jitter` (0 to 1) saying where, so that many clients don't
    /// retry in lockstep.
    public func backoff(afterAttempt attempt: Int, jitter: Double) -> Double {
        let step = min(maxDelay, baseDelay * pow(2, Double(attempt - 1)))
        return step / 2 + jitter * step / 2
    }

    /// The longest wait a server can ask for: past a day it is asked again after a day.
    public static let longestRetryAfter: Double = 86_400

}

/// How a pull fetches articles.
public struct ArticleOptions: Sendable {
    /// Pages asked of one host in one pull; the rest wait for the next (status says how many).
    public var perHost = 20
    /// Pages asked for at once. The client's per-host limit (`PullSettings.perHost`) holds too,
    /// so pages of one host beyond it wait in the client, which starts each as a connection
    /// frees, with no trip back here between two pages.
    public var concurrency = 4
    /// A page longer than this is not read.
    public var maxBytes = 2 << 20
    public init() {}
}

/// What became of one item's page.
public enum ArticleEvent: Sendable {
    /// The pages of `count` items are to be fetched in this run.
    case planned(count: Int)
    /// An item's page arrived, `bytes` long (0: it did not).
    case fetched(bytes: Int)
    /// What became of an item's article: stored, or why there is none (`failure`).
    case kept(itemID: Int64, failure: String?)
}

/// What a pull reports while it runs, in the order it happens.
public enum PullUpdate: Sendable {
    case feed(PullEvent)
    case picture(PictureEvent)
    /// An item's page was fetched for its article (a full-text feed's).
    case article(ArticleEvent)
    /// The pull of `feeds[index]`, `feed`, ended so (or it was skipped).
    case finished(index: Int, feed: Feed, PullReport)
    /// A local fault (the disk, the store, a link planted in the picture folder): the run's, said
    /// once however often it happens, by the prefetch or a feed; the pull goes on and ends 74.
    case localFault(String)
}

/// One feed's pictures in a pull: stored, their bytes, and those that failed.
public struct PictureTally: Sendable, Equatable {
    public var count = 0
    public var bytes = 0
    public var failed = 0
    public init() {}
}

/// The article pages of a pull: articles stored, and pages that gave none.
public struct ArticleTally: Sendable, Equatable {
    public var stored = 0
    public var failed = 0
    public init() {}
}
