import FeedSyncModel
import Foundation
import Testing

@testable import FeedSyncFeed
@testable import FeedSyncMarkup
@testable import FeedSyncPage

/// Tiny Tiny RSS's answers are checked as a feed's: ids in range, strings bounded, links only
/// http(s), refusals named by the API's code, anything else one sentence.
@Suite struct TinyTinyRSSAnswerTests {
    static func answer(_ content: String, status: Int = 0) -> Data {
        Data("{\"seq\": 0, \"status\": \(status), \"content\": \(content)}".utf8)
    }

    @Test func articlesOutOfRangeOrUnusableAreSkippedAndTheRestBounded() throws {
        let long = String(repeating: "word ", count: 20_000)
        let content = """
            [{"id": 7, "feed_id": 2, "unread": false, "marked": true, "title": "\\u001b[31mRed\\u001b[0m \(long)",
              "link": "javascript:alert(1)", "updated": 1767225600, "author": "Ann\\nOther",
              "content": "<p>Hi<script>alert(1)</script><img src=\\"http://example.com/a.png\\"></p>",
              "attachments": [{"content_url": "http://example.com/att.jpg", "content_type": "image/jpeg"}]},
             {"id": -5, "feed_id": 2, "title": "negative"},
             {"id": 1152921504606846976, "feed_id": 2, "title": "too large"},
             {"id": 8, "title": "no feed"},
             "not an object"]
            """
        let (articles, skipped) = try TinyTinyRSSAnswer.articles(Self.answer(content))
        #expect(skipped == 4)
        let article = try #require(articles.first)
        #expect(article.id == "7" && article.feedID == "2" && !article.unread && article.starred)
        #expect(article.item.key == "7")
        #expect(article.item.title.count <= FeedLimits.titleCharacters)
        #expect(article.item.link == nil, "a javascript: link is no link")
        #expect(article.item.pictureURL == "http://example.com/att.jpg", "an image attachment first")
        #expect(article.item.published == "2026-01-01T00:00:00Z")
        #expect(article.item.author == "Ann Other")
        #expect(article.item.contentPictures?.map(\.url) == ["http://example.com/a.png"])
    }

    @Test func aPageOfIdsKeepsTheIdsInRangeAndCountsEveryEntry() throws {
        let content = """
            [{"id": 7, "title": "t"}, {"id": -5}, {"id": 1152921504606846976}, {"title": "no id"}, "not an object",
             {"id": 9}]
            """
        let page = try TinyTinyRSSAnswer.articleIDs(Self.answer(content))
        #expect(page.ids == ["7", "9"] && page.entries == 6)
        #expect(throws: RemoteRefusal.self) { try TinyTinyRSSAnswer.articleIDs(Self.answer("{}")) }
    }

    @Test func refusalsAreNamedByTheirCodeAndOtherAnswersAreOneSentence() throws {
        #expect(throws: RemoteRefusal(code: "NOT_LOGGED_IN", description: "the server answered NOT_LOGGED_IN")) {
            try TinyTinyRSSAnswer.articles(Self.answer("{\"error\": \"NOT_LOGGED_IN\"}", status: 1))
        }
        // A code with anything but letters, digits and _ is cut to those.
        let odd = #expect(throws: RemoteRefusal.self) {
            try TinyTinyRSSAnswer.accepted(Self.answer("{\"error\": \"\\u001b]0;x\\u0007BAD\"}", status: 1))
        }
        #expect(odd?.code == "0xBAD")
        let html = #expect(throws: RemoteRefusal.self) { try TinyTinyRSSAnswer.session(Data("<html>".utf8)) }
        #expect(html?.code == nil && html?.description.hasPrefix("the answer is not the API's JSON") == true)
        #expect(throws: RemoteRefusal.self) { try TinyTinyRSSAnswer.session(Self.answer("{\"session_id\": \"a b\"}")) }
        let many = "[" + Array(repeating: "{}", count: 10_001).joined(separator: ",") + "]"
        #expect(throws: RemoteRefusal.self) { try TinyTinyRSSAnswer.articles(Self.answer(many)) }
    }
}
