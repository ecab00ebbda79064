import FeedSyncModel
import Foundation
import Testing

@testable import FeedSyncFeed
@testable import FeedSyncMarkup

/// Who wrote an item and its categories, from every format: plain text, bounded, none repeated.
@Suite struct BylineTests {
    static func items(_ text: String, url: String = "https://example.com/feed", headers: [String: String] = [:])
        throws -> [FeedItem]
    {
        try decode(Data(text.utf8), url: url, headers: headers).page.items
    }

    @Test func rssTakesAuthorOrDublinCoresCreatorAndEachCategory() throws {
        let items = try Self.items(
            """
            <rss version="2.0" xmlns:dc="http://purl.org/dc/elements/1.1/"><channel><title>T</title>
            <item><guid>1</guid><title>a</title><author>jane@example.com (Jane Doe)</author>
              <category>Swift</category><category domain="x">Linux &amp; <b>Unix</b></category><category>swift</category>
              <category>  </category></item>
            <item><guid>2</guid><title>b</title><dc:creator><![CDATA[Bob  <i>Smith</i>]]></dc:creator></item>
            <item><guid>3</guid><title>c</title><author>only@example.com</author></item>
            </channel></rss>
            """)
        #expect(items[0].author == "Jane Doe", "the name after an address")
        #expect(items[0].categories == ["Swift", "Linux & Unix"], "plain, none empty or repeated in any case")
        #expect(items[1].author == "Bob Smith" && items[1].categories.isEmpty)
        #expect(items[2].author == "only@example.com")
    }

    @Test func atomTakesTheAuthorsNameElseTheFeedsAndLabelOrTerm() throws {
        let items = try Self.items(
            """
            <feed xmlns="http://www.w3.org/2005/Atom"><title>T</title>
            <author><name>The Team</name><email>team@example.com</email></author>
            <entry><id>1</id><title>a</title><author><name>Ann</name><uri>https://ann.example</uri></author>
              <category term="swift" label="Swift Language"/><category term="linux"/><category scheme="s"/></entry>
            <entry><id>2</id><title>b</title></entry>
            </feed>
            """)
        #expect(items[0].author == "Ann", "the name, not the uri")
        #expect(items[0].categories == ["Swift Language", "linux"])
        #expect(items[1].author == "The Team", "the feed's author for an entry that names none")
    }

    @Test func rdfTakesDublinCoresCreator() throws {
        let items = try Self.items(
            """
            <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/"
              xmlns:dc="http://purl.org/dc/elements/1.1/">
            <item rdf:about="https://example.com/1"><title>a</title><dc:creator>Dee</dc:creator></item>
            </rdf:RDF>
            """)
        #expect(items[0].author == "Dee")
    }

    @Test func jsonFeedTakesAuthorsOrAuthorAndTags() throws {
        let items = try Self.items(
            """
            {"version": "https://jsonfeed.org/version/1.1", "title": "T", "authors": [{"name": "Feed Owner"}],
             "items": [
               {"id": "1", "title": "a", "authors": [{"name": "Ann"}, {"name": "Bo"}], "tags": ["x", "Y", 3, "x"]},
               {"id": "2", "title": "b", "author": {"name": "Old Style"}},
               {"id": "3", "title": "c"}]}
            """, url: "https://example.com/feed.json")
        #expect(items[0].author == "Ann, Bo" && items[0].categories == ["x", "Y", "3"])
        #expect(items[1].author == "Old Style", "JSON Feed 1.0's author")
        #expect(items[2].author == "Feed Owner", "the feed's authors for an item that names none")
    }

    @Test func wordPressTakesTheEmbeddedAuthorAndTerms() throws {
        let items = try Self.items(
            """
            [{"id": 1, "guid": {"rendered": "https://wp.example/?p=1"}, "title": {"rendered": "a"},
              "link": "https://wp.example/a", "_embedded": {
                "author": [{"name": "Wendy &amp; Co"}],
                "wp:term": [[{"name": "News", "taxonomy": "category"}], [{"name": "swift", "taxonomy": "post_tag"}]]}}]
            """, url: "https://wp.example/wp-json/wp/v2/posts", headers: ["X-WP-Total": "1", "X-WP-TotalPages": "1"])
        #expect(items[0].author == "Wendy & Co" && items[0].categories == ["News", "swift"])
    }

    @Test func pagedJSONTakesAuthorAndTags() throws {
        let items = try Self.items(
            #"{"items": [{"id": "1", "title": "a", "author": "Pat", "tags": ["one", "two"]}], "total": 1}"#,
            url: "https://example.com/api/items?page=1")
        #expect(items[0].author == "Pat" && items[0].categories == ["one", "two"])
    }

    @Test func tinyTinyRSSTakesTagsAndLabelCaptions() throws {
        let content = """
            [{"id": 7, "feed_id": 2, "title": "t", "author": "Ann", "tags": ["go", "", "rust"],
              "labels": [[-1026, "Later", "", ""], "junk"]}]
            """
        let article = try #require(
            try TinyTinyRSSAnswer.articles(TinyTinyRSSAnswerTests.answer(content)).articles.first)
        #expect(article.item.author == "Ann" && article.item.categories == ["go", "rust", "Later"])
    }

    @Test func googleReaderTakesTheCategoriesThatAreNotTheUsers() throws {
        let body = """
            {"items": [{"id": "1796162308513958", "origin": {"streamId": "feed/3"}, "title": "t", "author": "Ann",
              "categories": ["user/-/state/com.google/reading-list", "user/-/label/Tech", "Swift", "Linux"]}]}
            """
        let article = try #require(try GoogleReaderAnswer.items(Data(body.utf8)).elements.first)
        #expect(article.item.author == "Ann" && article.item.categories == ["Swift", "Linux"])
    }

    @Test func aCategoryIsBoundedAsATitleAndTheirNumberToo() throws {
        let many = (0..<40).map { "<category>c\($0)</category>" }.joined()
        let long = String(repeating: "é", count: 3000)
        let items = try Self.items(
            "<rss version=\"2.0\"><channel><item><guid>1</guid><title>a</title><category>\(long)</category>\(many)"
                + "<author>\(long)</author></item></channel></rss>")
        #expect(items[0].categories.count == FeedLimits.categories)
        #expect(items[0].categories[0].count <= FeedLimits.titleCharacters)
        #expect((items[0].author?.count ?? 0) <= FeedLimits.titleCharacters)
    }
}
