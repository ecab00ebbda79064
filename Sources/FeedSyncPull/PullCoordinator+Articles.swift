import FeedSyncFeed
import FeedSyncMarkup
import FeedSyncModel
import FeedSyncPage
import FeedSyncStore
import FeedSyncTransport
import Foundation

// Whole articles for feeds that publish teasers: each item's page, fetched by a pull, its article
// extracted (`ArticleExtractor`) and stored beside the feed's text (`Store+Articles.swift`).

extension PullCoordinator {
    /// Fetches the due articles of full-text feeds through `client`: the reader's page first,
    /// then the newest, at most `options.perHost` pages of one host; `onStored` hears each stored
    /// one (its pictures are then due). Failures are the articles': recorded, tried again later.
    func fetchArticles(
        options: ArticleOptions, onEvent: @escaping @Sendable (ArticleEvent) -> Void,
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
        guard let due = try? await store.dueArticles(first: window, limit: 5000) else { return }
        var perHost: [String: Int] = [:]
        let jobs = due.filter { job in
            let host = NetworkVerdict.host(of: job.link)
            perHost[host, default: 0] += 1
            return perHost[host]! <= options.perHost
        }
        // Pages are read (their articles found) on every core while the next are fetched: at most
        // `concurrency` fetches at once, and at most `concurrency` + cores pages held. What they
        // gave is stored a few at a time (each item's rows whole in one transaction).
        let cores = max(1, ProcessInfo.processInfo.activeProcessorCount)
        await withTaskGroup(of: ArticleStep.self) { group in
            var next = jobs.makeIterator()
            var (fetching, reading) = (0, 0)
            let client = client
            func fill() {
                while fetching < options.concurrency, fetching + reading < options.concurrency + cores,
                    !Task.isCancelled, let job = next.next()
                {
                    fetching += 1
                    group.addTask {
                        let request = HTTPRequest(
                            url: job.link, headers: [("Accept", "text/html,application/xhtml+xml;q=0.9")],
                            maxBodyBytes: options.maxBytes)
                        do throws(TransportError) {
                            return .fetched(FetchedPage(job: job, response: .success(try await client.get(request))))
                        } catch {
                            return .fetched(FetchedPage(job: job, response: .failure(error)))
                        }
                    }
                }
            }
            var kept: [ArticleOutcome] = []
            func keep() async {
                let outcomes = kept
                kept = []
                do throws(StoreError) {
                    try await store.keepArticles(outcomes)
                    for outcome in outcomes {
                        if outcome.failure == nil { onStored() }
                        onEvent(.kept(itemID: outcome.itemID, failure: outcome.failure))
                    }
                } catch {
                    for outcome in outcomes { onEvent(.kept(itemID: outcome.itemID, failure: error.message)) }
                }
            }
            if !jobs.isEmpty { onEvent(.planned(count: jobs.count)) }
            fill()
            for await step in group {
                switch step {
                case .fetched(let page):
                    onEvent(.fetched(bytes: (try? page.response.get())?.bodyBytes ?? 0))
                    (fetching, reading) = (fetching - 1, reading + 1)
                    group.addTask { .read(self.outcome(of: page, options: options)) }
                case .read(let outcome):
                    reading -= 1
                    kept.append(outcome)
                    if kept.count == 16 { await keep() }
                }
                fill()
            }
            if !kept.isEmpty { await keep() }
        }
    }

    /// What one of `fetchArticles`' tasks gave: an item's page, or what was found in it.
    enum ArticleStep: Sendable {
        case fetched(FetchedPage)
        case read(ArticleOutcome)
    }

    /// An item's page as it came back.
    struct FetchedPage: Sendable {
        var job: ArticleJob
        var response: Swift.Result<HTTPResponse, TransportError>
    }

    /// The article of one item's page, or why there is none.
    func outcome(of page: FetchedPage, options: ArticleOptions) -> ArticleOutcome {
        let job = page.job
        let failure: String
        let retry: Bool
        do {
            let response = try page.response.get()
            if !(200..<300).contains(response.status) {
                (failure, retry) = ("the page answered \(response.status)", true)
            } else if !response.isWebPage {
                (failure, retry) = ("the page is not HTML (\(response.contentType.prefix(60)))", false)
            } else if let article = try ArticleExtractor.extract(Array(response.body), url: response.effectiveURL),
                article.readerable
            {
                let html = article.content
                let pictures = ArticlePictures.find(in: Array(html.utf8), base: response.effectiveURL)
                return ArticleOutcome(
                    itemID: job.itemID, link: job.link,
                    result: .stored(html: html, title: article.title, byline: article.byline, pictures: pictures))
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
        return ArticleOutcome(
            itemID: job.itemID, link: job.link,
            result: .failed(
                error: failure, attempts: attempts, retryAt: retry ? clock.now().addingTimeInterval(wait) : nil))
    }
}
