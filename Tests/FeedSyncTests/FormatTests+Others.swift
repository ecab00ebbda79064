import FeedSyncModel
import Foundation
import Testing

@testable import FeedSyncFeed
@testable import FeedSyncMarkup
@testable import FeedSyncPage

@Suite struct JSONFeedTests {
    @Test func readsItemsPicturesAndNextURL() throws {
        let (format, page) = try decode(fixture("jsonfeed-awkward.json"), url: "https://example.net/feed.json")
        #expect(format == .jsonFeed)
        #expect(page.next == "https://example.net/feed.json?page=2" && page.hasMore == true)
        #expect(page.skipped == 1)
        #expect(page.title == "JSON Feed awkward" && page.siteURL == "https://example.net/")
        let items = page.items
        #expect(items.map(\.key) == ["1", "2", "3", "4", "https://example.net/posts/6"])
        #expect(
            items[0]
                == FeedItem(
                    key: "1", title: "Image field", link: "https://example.net/posts/1",
                    pictureURL: "https://example.net/img/1.png", published: "2024-05-01T08:00:00Z", summary: "Text.",
                    content: "<p>Text.</p>"),
            "content_text becomes escaped HTML paragraphs")
        #expect(items[1].link == "https://other.example/2")
        #expect(
            items[1].title.hasPrefix("No title here, so the start of this HTML content")
                && items[1].title.hasSuffix("…"))
        #expect(items[1].pictureURL == "https://example.net/banner/2.png")
        #expect(items[2].pictureURL == "https://example.net/a.jpg", "the first image attachment")
        #expect(items[2].published == "2024-05-03T10:00:00Z")
        #expect(items[3].pictureURL == "https://example.net/img/4.gif")
    }

    @Test func titlesWithEscapedCharactersShowTheCharacters() throws {
        let json = """
            {"version": "https://jsonfeed.org/version/1.1", "title": "Tom &amp; Jerry&#8217;s", "items": [
              {"id": "1", "title": "It&#8216;s &lt;b&gt; &amp; more", "content_text": "x"}]}
            """
        let (_, page) = try decode(Data(json.utf8), url: "https://example.net/feed.json")
        #expect(page.title == "Tom & Jerry’s")
        #expect(page.items.map(\.title) == ["It‘s <b> & more"], "decoded, and a tag written so stays text")
    }
}

@Suite struct WordPressTests {
    let url = "https://wp.example/wp-json/wp/v2/posts?per_page=100&_embed&page=1"

    @Test func readsRenderedFieldsFeaturedMediaAndTotals() throws {
        let headers = ["x-wp-total": "250", "x-wp-totalpages": "3"]
        let (format, page) = try decode(fixture("wordpress-posts.json"), url: url, headers: headers)
        #expect(format == .wordpress)
        #expect(page.total == 250 && page.hasMore == true && page.page == 1)
        #expect(
            page.items == [
                FeedItem(
                    key: "https://wp.example/?p=12&lang=en", title: "Café – news & more",
                    link: "https://wp.example/2024/05/03/cafe/",
                    pictureURL: "https://wp.example/wp-content/uploads/featured.jpg",
                    published: "2024-05-03T08:00:00Z", summary: "Short excerpt…",
                    content: #"<p><img src="https://wp.example/wp-content/inline.jpg"></p>"#),
                FeedItem(
                    key: "https://wp.example/?p=11", title: "Inline picture",
                    link: "https://wp.example/2024/05/02/inline/",
                    pictureURL: "https://wp.example/wp-content/uploads/inline-11.png",
                    published: "2024-05-02T08:00:00Z",
                    summary: nil,
                    content: #"<figure><img class="x" src="/wp-content/uploads/inline-11.png" /></figure>"#),
                FeedItem(
                    key: "10", title: "No guid", link: "https://wp.example/2024/05/01/plain/", pictureURL: nil,
                    published: "2024-05-01T08:00:00Z", summary: nil),
            ])
        let last = try decode(fixture("wordpress-posts.json"), url: url, headers: headers, page: 3).page
        #expect(last.hasMore == false)
    }

    @Test func buildsPageURLsAndTreatsInvalidPageNumberAsTheEnd() {
        #expect(
            FeedFormat.wordpress.url(of: "https://wp.example/wp-json/wp/v2/posts", page: 2)
                == "https://wp.example/wp-json/wp/v2/posts?per_page=100&_embed&page=2")
        #expect(
            FeedFormat.wordpress.url(of: "https://wp.example/wp-json/wp/v2/posts?per_page=20&page=9", page: 3)
                == "https://wp.example/wp-json/wp/v2/posts?per_page=20&_embed&page=3")
        #expect(FeedFormat.guess(fromURL: "https://wp.example/wp-json/wp/v2/posts") == .wordpress)
        let past = Data(
            #"""
            {"code":"rest_post_invalid_page_number",\#
            "message":"The page number requested is larger than the number of pages available.",\#
            "data":{"status":400}}
            """#.utf8)
        #expect(FeedDocument.isPastLastPage(status: 400, body: past, format: .wordpress))
        #expect(!FeedDocument.isPastLastPage(status: 404, body: past, format: .wordpress))
        #expect(!FeedDocument.isPastLastPage(status: 400, body: Data("bad".utf8), format: .wordpress))
    }
}

@Suite struct FormatDetectionTests {
    @Test func findsTheFormatFromTheDocumentAndHonoursAChosenOne() throws {
        #expect(try decode(fixture("rss-awkward.xml"), url: "https://x/").format == .rss)
        #expect(try decode(fixture("atom-awkward.xml"), url: "https://x/").format == .atom)
        #expect(try decode(fixture("jsonfeed-awkward.json"), url: "https://x/").format == .jsonFeed)
        #expect(try decode(fixture("wordpress-posts.json"), url: "https://x/").format == .wordpress)
        #expect(try decode(Data("\u{FEFF}  {\"items\": []}".utf8), url: "https://x/").format == .pagedJSON)

        let chosen = #expect(throws: FeedError.self) {
            try decode(fixture("jsonfeed-awkward.json"), url: "https://x/", format: .rss)
        }
        #expect(chosen?.reason.contains("not rss as chosen with --format") == true)
        let neither = #expect(throws: FeedError.self) { try decode(Data("hello".utf8), url: "https://x/") }
        #expect(neither?.reason.contains("neither JSON nor XML") == true)
    }

    @Test func linkHeaderGivesTheNextPageOfALinkedFormat() throws {
        let json = Data(#"{"version": "https://jsonfeed.org/version/1", "items": [{"id": "a"}]}"#.utf8)
        let headers = ["link": #"<https://x.example/feed.json?before=a>; rel="prev", </feed.json?after=a>; rel="next""#]
        let page = try decode(json, url: "https://x.example/feed.json", headers: headers).page
        #expect(page.next == "https://x.example/feed.json?after=a")
        #expect(page.hasMore == true)
    }
}
