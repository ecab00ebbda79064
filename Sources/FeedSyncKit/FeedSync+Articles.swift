import FeedSyncFeed
import FeedSyncMarkup
import FeedSyncModel
import FeedSyncPull
import FeedSyncStore
import FeedSyncTransport
import Foundation

// Whole articles for feeds that publish teasers: each item's page, fetched by a pull, its article
// extracted (`ArticleExtractor`) and stored beside the feed's text (`Store+Articles.swift`).

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
}
