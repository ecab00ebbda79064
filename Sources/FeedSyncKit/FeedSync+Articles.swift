import FeedSyncFeed
import FeedSyncStore
import FeedSyncSync
import FeedSyncTransport
import Foundation

// Whole articles for feeds that publish teasers: each item's page, fetched by a pull, its article
// extracted (`ArticleExtractor`) and stored beside the feed's text (`Store+Articles.swift`).

/// How a pull fetches articles.
public struct ArticleOptions: Sendable {
    /// Pages asked of one host in one pull; the rest wait for the next (status says how many).
    public var perHost = 20
    /// Pages fetched at once (the client's per-host limit holds too).
    public var concurrency = 2
    /// A page longer than this is not read.
    public var maxBytes = 2 << 20
    public init() {}
}

/// What became of one item's page.
public struct ArticleEvent: Sendable {
    public var itemID: Int64
    /// Why there is no article (nil: stored).
    public var failure: String?
}

extension FeedSync {
    /// Turns fetching each item's page on or off for `feed`.
    public func setFullText(_ feed: Feed, _ on: Bool) async throws(StoreError) {
        try await store.setFullText(feedID: feed.id, on)
    }

    /// The feeds that publish summaries only (a hint to turn `full-text` on).
    public func summaryOnlyFeeds() async throws(StoreError) -> Set<Int64> { try await store.summaryOnlyFeeds() }

    public func articleCounts() async throws(StoreError) -> [Int64: ArticleCounts] {
        try await store.articleCounts()
    }

    /// Fetches the due articles of full-text feeds through `client`: the reader's page first,
    /// then the newest, at most `options.perHost` pages of one host; `onStored` hears each stored
    /// one (its pictures are then due). Failures are the articles': recorded, tried again later.
    func fetchArticles(
        client: HTTPClient, options: ArticleOptions, onEvent: @escaping @Sendable (ArticleEvent) -> Void,
        onStored: @escaping @Sendable () -> Void
    ) async {
        guard let feeds = try? await store.fullTextFeeds(), !feeds.isEmpty else { return }
        var window: [Int64] = []
        if let position = try? await store.latestReadingPosition() ?? .start,
            let page = try? await store.list(
                ListQuery(feedURL: position.feedURL), page: position.page, perPage: position.perPage)
        {
            window = page.items.map(\.number)
        }
        guard let due = try? await store.dueArticles(first: window, limit: 5000, now: clock.now()) else { return }
        var perHost: [String: Int] = [:]
        let jobs = due.filter { job in
            let host = NetworkVerdict.host(of: job.link)
            perHost[host, default: 0] += 1
            return perHost[host]! <= options.perHost
        }
        await withTaskGroup(of: Void.self) { group in
            var next = jobs.makeIterator()
            func start() {
                guard !Task.isCancelled, let job = next.next() else { return }
                group.addTask { [self] in
                    let failure = await fetchArticle(job, client: client, options: options)
                    if failure == nil { onStored() }
                    onEvent(ArticleEvent(itemID: job.itemID, failure: failure))
                }
            }
            for _ in 0..<options.concurrency { start() }
            for await _ in group { start() }
        }
    }

    /// Fetches one item's page and stores its article; why not, when it could not.
    func fetchArticle(_ job: ArticleJob, client: HTTPClient, options: ArticleOptions) async -> String? {
        let failure: String
        let retry: Bool
        do {
            let response = try await client.get(
                HTTPRequest(
                    url: job.link, headers: [("Accept", "text/html,application/xhtml+xml;q=0.9")],
                    maxBodyBytes: options.maxBytes))
            if !(200..<300).contains(response.status) {
                (failure, retry) = ("the page answered \(response.status)", true)
            } else if !response.isWebPage {
                (failure, retry) = ("the page is not HTML (\(response.contentType.prefix(60)))", false)
            } else if let article = try ArticleExtractor.extract(Array(response.body), url: response.effectiveURL),
                article.readerable
            {
                let html = article.content
                do {
                    try await store.storeArticle(
                        itemID: job.itemID, link: job.link, html: html, title: article.title, byline: article.byline,
                        pictures: ArticlePictures.find(in: Array(html.utf8), base: response.effectiveURL))
                    return nil
                } catch {
                    return (error as? StoreError)?.message ?? "\(error)"
                }
            } else {
                (failure, retry) = ("the page holds no article", true)
            }
        } catch let error as TransportError {
            (failure, retry) = (
                error.kind == .tooLarge ? "the page is larger than \(options.maxBytes >> 20) MB" : error.detail, true
            )
        } catch {
            (failure, retry) = ("\(error)", true)
        }
        let attempts = job.attempts + 1
        let wait = min(3600 * pow(2, Double(attempts - 1)), 7 * 86400)
        try? await store.articleFailed(
            itemID: job.itemID, link: job.link, error: failure, attempts: attempts,
            retryAt: retry ? clock.now().addingTimeInterval(wait) : nil)
        return failure
    }
}
