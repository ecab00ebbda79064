import FeedSyncFeed
import FeedSyncMarkup
import FeedSyncModel
import FeedSyncPage
import Foundation
import Testing

@Suite struct PagedJSONTests {
    func decode(_ json: String) throws -> FeedPage {
        try PagedJSON.decode(Data(json.utf8))
    }

    @Test func readsPagingFieldsAndItems() throws {
        let page = try decode(
            """
            {"page": 2, "total": 84, "has_more": true, "items": [
              {"id": "a1", "title": "First", "picUrl": "http://x/1.png", "link": "http://x/a1",
               "published": "2024-05-01T12:00:00+02:00", "summary": "S"}]}
            """)
        #expect(page.page == 2)
        #expect(page.total == 84)
        #expect(page.hasMore == true)
        #expect(
            page.items == [
                FeedItem(
                    key: "a1", title: "First", link: "http://x/a1", pictureURL: "http://x/1.png",
                    published: "2024-05-01T10:00:00Z", summary: "S")
            ])
    }

    @Test func acceptsNewsInsteadOfItemsAndEveryPictureSpelling() throws {
        let page = try decode(
            """
            {"news": [{"id": 1, "title": "a", "pic_url": "p1"}, {"id": 2, "title": "b", "image": "p2"},
                      {"id": 3, "title": "c", "imageUrl": "p3"}]}
            """)
        #expect(page.items.map(\.key) == ["1", "2", "3"])
        #expect(page.items.map(\.pictureURL) == ["p1", "p2", "p3"])
        #expect(page.hasMore == nil && page.total == nil && page.page == nil)
    }

    @Test func treatsMissingNullAndWrongTypedFieldsAsAbsent() throws {
        let page = try decode(
            """
            {"page": "x", "total": -3, "has_more": null, "items": [
              {"id": "k", "title": true, "picUrl": {"u": 1}, "link": null, "published": "yesterday", "summary": []}]}
            """)
        #expect(page.page == nil)
        #expect(page.total == nil)
        #expect(page.hasMore == nil)
        let item = try #require(page.items.first)
        #expect(item.title == "")
        #expect(item.pictureURL == nil && item.link == nil && item.published == nil && item.summary == nil)
    }

    @Test func skipsAndCountsEntriesThatAreNotObjects() throws {
        let page = try decode(#"{"items": [1, "two", null, [], {"id": "ok", "title": "t"}, {}]}"#)
        #expect(page.items.map(\.key) == ["ok"])
        #expect(page.skipped == 5)  // the empty object has no id, link, title or picture
    }

    @Test func derivesKeysFromIdThenLinkThenHash() throws {
        let page = try decode(
            """
            {"items": [{"id": "the-id", "link": "http://x/1", "title": "a"},
                       {"link": "http://x/2", "title": "b"},
                       {"title": "c", "picUrl": "http://x/c.png"},
                       {"title": "c", "picUrl": "http://x/c.png"},
                       {"title": "c", "picUrl": "http://x/other.png"}]}
            """)
        let keys = page.items.map(\.key)
        #expect(keys[0] == "the-id")
        #expect(keys[1] == "http://x/2")
        #expect(keys[2].hasPrefix("h:") && keys[2].count == 18)
        #expect(keys[2] == keys[3] && keys[3] == keys[4], "the same title, whatever the picture: one key")
        #expect(page.items[2].formerKey == ItemKey.hash(title: "c", pictureURL: "http://x/c.png"))
    }

    @Test func readsCommonDateStyles() throws {
        let page = try decode(
            """
            {"items": [{"id": "1", "published": "Wed, 01 May 2024 10:00:00 GMT"},
                       {"id": "2", "date": "2024-05-01 10:00:00"},
                       {"id": "3", "published": 1714557600},
                       {"id": "4", "published": "2024-05-01T10:00:00.250Z"}]}
            """)
        #expect(page.items.map(\.published) == Array(repeating: "2024-05-01T10:00:00Z", count: 4))
    }

    @Test(arguments: ["", "not json", "[1, 2]", #"{"items": 3}"#, #"{"page": 1, "items": [{"id": "a"}"#])
    func rejectsUnusableDocumentsWithAReason(json: String) throws {
        let error = #expect(throws: FeedError.self) { try decode(json) }
        #expect(error?.reason.isEmpty == false)
    }

    @Test func setsThePageParameterOfTheFeedURL() {
        #expect(PagedJSON.url(of: "http://h/feed", page: 3) == "http://h/feed?page=3")
        #expect(PagedJSON.url(of: "http://h/feed?lang=en&page=9", page: 2) == "http://h/feed?lang=en&page=2")
    }
}
