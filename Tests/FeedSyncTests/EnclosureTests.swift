import FeedSyncModel
import Foundation
import Testing

@testable import FeedSyncFeed
@testable import FeedSyncMarkup
@testable import FeedSyncPage

/// The files an item carries (a podcast's episodes), from every format that has them: URL, type,
/// length and duration, each checked where it enters; an item's picture is never one of them.
@Suite struct EnclosureTests {
    @Test func rssEnclosureAndItunesDurationAndMediaContentOfSound() throws {
        let rss = """
            <rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd"
                 xmlns:media="http://search.yahoo.com/mrss/"><channel><title>Pod</title>
            <item><title>Episode 1</title><guid>e1</guid>
              <enclosure url="/audio/e1.mp3" length="24117248" type="audio/mpeg"/>
              <enclosure url="https://cdn.example/e1.jpg" length="300" type="image/jpeg"/>
              <itunes:duration>42:05</itunes:duration></item>
            <item><title>Episode 2</title><guid>e2</guid>
              <media:content url="https://cdn.example/e2.m4a" fileSize="1000" duration="3723"/>
              <media:content url="https://cdn.example/e2.webm" medium="video" type="video/webm; codecs=vp9"/>
              <media:content url="https://cdn.example/e2.png" medium="image"/></item>
            <item><title>Episode 3</title><guid>e3</guid>
              <enclosure url="https://cdn.example/e3.mp3" length="0" type="audio/mpeg"/>
              <media:content url="https://cdn.example/e3.mp3" duration="61"/>
              <itunes:duration>1:02:03</itunes:duration></item>
            <item><title>Hostile</title><guid>e4</guid>
              <enclosure url="javascript:alert(1)" type="audio/mpeg"/>
              <enclosure url="https://cdn.example/e4.mp3" length="99999999999999999999" type="audio/mp eg"/>
              <itunes:duration>99:99</itunes:duration></item>
            </channel></rss>
            """
        let items = try decode(Data(rss.utf8), url: "https://pod.example/feed.xml").page.items
        #expect(
            items[0].enclosures == [
                FeedEnclosure(
                    url: "https://pod.example/audio/e1.mp3", type: "audio/mpeg", length: 24_117_248, duration: 2525)
            ], "resolved against the feed; the picture is the item's picture")
        #expect(items[0].pictureURL == "https://cdn.example/e1.jpg")
        #expect(
            items[1].enclosures == [
                FeedEnclosure(url: "https://cdn.example/e2.m4a", type: nil, length: 1000, duration: 3723),
                FeedEnclosure(url: "https://cdn.example/e2.webm", type: "video/webm"),
            ])
        // The same file twice is one enclosure, what each says of it together.
        #expect(
            items[2].enclosures == [
                FeedEnclosure(url: "https://cdn.example/e3.mp3", type: "audio/mpeg", length: nil, duration: 61)
            ])
        // No URL a reader may open, a length out of range, a type that is none, a
        // duration that is none: each left out, never stored as written.
        #expect(items[3].enclosures == [FeedEnclosure(url: "https://cdn.example/e4.mp3")])
    }

    @Test func atomEnclosureLinks() throws {
        let atom = """
            <feed xmlns="http://www.w3.org/2005/Atom"><title>Talks</title>
            <entry><id>t1</id><title>Talk</title><link href="https://talks.example/1"/>
              <link rel="enclosure" href="https://talks.example/1.mp4" type="video/mp4" length="52428800"/>
              <link rel="enclosure" href="https://talks.example/1.pdf" type="application/pdf"/>
              <link rel="enclosure" href="https://talks.example/1.png" type="image/png"/></entry>
            </feed>
            """
        let item = try #require(try decode(Data(atom.utf8), url: "https://talks.example/atom").page.items.first)
        #expect(
            item.enclosures == [
                FeedEnclosure(url: "https://talks.example/1.mp4", type: "video/mp4", length: 52_428_800),
                FeedEnclosure(url: "https://talks.example/1.pdf", type: "application/pdf"),
            ])
        #expect(item.pictureURL == "https://talks.example/1.png")
    }

    @Test func jsonFeedAttachments() throws {
        let json = """
            {"version": "https://jsonfeed.org/version/1.1", "title": "Pod", "items": [
              {"id": "1", "title": "One", "content_text": "Hi", "attachments": [
                {"url": "ep/1.mp3", "mime_type": "audio/mpeg", "size_in_bytes": 1234, "duration_in_seconds": 90},
                {"url": "https://pod.example/cover.jpg", "mime_type": "image/jpeg"},
                {"url": "ftp://pod.example/1.mp3", "mime_type": "audio/mpeg"},
                {"url": "https://pod.example/1.ogg", "mime_type": "audio/ogg", "size_in_bytes": -5,
                 "duration_in_seconds": 1e99}]}]}
            """
        let item = try #require(try decode(Data(json.utf8), url: "https://pod.example/feed.json").page.items.first)
        #expect(
            item.enclosures == [
                FeedEnclosure(url: "https://pod.example/ep/1.mp3", type: "audio/mpeg", length: 1234, duration: 90),
                FeedEnclosure(url: "https://pod.example/1.ogg", type: "audio/ogg"),
            ])
        #expect(item.pictureURL == "https://pod.example/cover.jpg")
    }

    @Test func tinyTinyRSSAttachments() throws {
        let content = """
            [{"id": 7, "feed_id": 2, "title": "Episode", "link": "https://pod.example/7", "updated": 1767225600,
              "content": "<p>Hi</p>", "attachments": [
                {"content_url": "https://pod.example/7.mp3", "content_type": "audio/mpeg", "duration": "1800"},
                {"content_url": "https://pod.example/7.jpg", "content_type": "image/jpeg"}]}]
            """
        let (articles, _) = try TinyTinyRSSAnswer.articles(TinyTinyRSSAnswerTests.answer(content))
        #expect(
            articles.first?.item.enclosures == [
                FeedEnclosure(url: "https://pod.example/7.mp3", type: "audio/mpeg", duration: 1800)
            ])
    }

    @Test func aDurationIsReadAsPodcastsWriteIt() {
        #expect(FeedEnclosure.seconds("3723") == 3723)
        #expect(FeedEnclosure.seconds("3723.6") == 3723)
        #expect(FeedEnclosure.seconds("62:03") == 3723)
        #expect(FeedEnclosure.seconds(" 1:02:03 ") == 3723)
        for bad in ["", "1:2:3:4", "1:60", "-1", "abc", "1:xx", "99999999"] {
            #expect(FeedEnclosure.seconds(bad) == nil, "\(bad)")
        }
        #expect(FeedEnclosure.mediaType("Audio/MPEG") == "audio/mpeg")
        #expect(FeedEnclosure.mediaType("audio") == nil && FeedEnclosure.mediaType("a/b/c") == nil)
    }

    @Test func aThousandEnclosuresKeepTheFirstEight() throws {
        let many = (0..<1000).map { "<enclosure url=\"https://e.example/\($0).mp3\" type=\"audio/mpeg\"/>" }
        let rss =
            "<rss version=\"2.0\"><channel><item><guid>g</guid><title>t</title>\(many.joined())</item></channel></rss>"
        let item = try #require(try decode(Data(rss.utf8), url: "https://e.example/feed").page.items.first)
        #expect(item.enclosures.count == FeedLimits.enclosures)
        #expect(item.enclosures.first?.url == "https://e.example/0.mp3")
    }
}
