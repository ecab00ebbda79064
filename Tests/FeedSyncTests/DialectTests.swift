import FeedSyncModel
import Foundation
import Testing

@testable import FeedSyncFeed
@testable import FeedSyncMarkup
@testable import FeedSyncPage

/// The dialects real feeds are written in (issue 17), each with a minimal document of our own.
@Suite struct DialectTests {
    func items(_ xml: String, url: String = "https://d.example/feed") throws -> [FeedItem] {
        try decode(Data(xml.utf8), url: url).page.items
    }

    @Test func atom03WithItsDatesAndContentModes() throws {
        let read = try items(
            """
            <feed version="0.3" xmlns="http://purl.org/atom/ns#">
              <title>t</title>
              <entry><title>One</title><link rel="alternate" type="text/html" href="https://d.example/1"/>
                <id>tag:d.example,2004:1</id><issued>2004-01-02T10:00:00Z</issued>\
            <modified>2004-01-03T10:00:00Z</modified>
                <content type="text/html" mode="escaped">\
            &lt;p&gt;Escaped &lt;b&gt;HTML&lt;/b&gt;&lt;/p&gt;</content></entry>
              <entry><id>tag:d.example,2004:2</id><created>2004-02-01T00:00:00Z</created>
                <title type="text/html" mode="base64">Q2Fmw6kgJmFtcDsgPGI+Ym9sZDwvYj4=</title></entry>
              <entry><id>tag:d.example,2004:3</id><modified>2004-03-01T00:00:00Z</modified>
                <summary type="application/xhtml+xml" mode="xml">\
            <div xmlns="http://www.w3.org/1999/xhtml">Inline <i>XHTML</i></div></summary></entry>
            </feed>
            """)
        #expect(read.map(\.key) == ["tag:d.example,2004:1", "tag:d.example,2004:2", "tag:d.example,2004:3"])
        #expect(read[0].title == "One" && read[0].link == "https://d.example/1")
        #expect(read[0].published == "2004-01-02T10:00:00Z", "issued before modified")
        #expect(read[0].summary == "Escaped HTML")
        #expect(read[1].title == "Café & bold", "base64 decoded before the title is read")
        #expect(read[1].published == "2004-02-01T00:00:00Z", "with no issued, created; modified last")
        #expect(read[2].published == "2004-03-01T00:00:00Z" && read[2].summary == "Inline XHTML")
    }

    @Test func atomWithoutANamespaceAndBase64TextInAtom10() throws {
        let plain = try items(
            """
            <feed><title>t</title><entry><id>e1</id><title>Plain</title><link href="/1"/>
              <published>2020-01-01T00:00:00Z</published></entry></feed>
            """)
        #expect(
            plain == [
                FeedItem(
                    key: "e1", title: "Plain", link: "https://d.example/1", pictureURL: nil,
                    published: "2020-01-01T00:00:00Z", summary: nil)
            ])
        let binary = try items(
            """
            <feed xmlns="http://www.w3.org/2005/Atom"><entry><id>b</id>
              <title type="application/octet-stream">RXhhbXBsZSA8Yj5BdG9tPC9iPg==</title></entry>
              <entry><id>c</id><title type="application/x-custom">test</title></entry></feed>
            """)
        #expect(binary.first?.title == "Example <b>Atom</b>", "decoded, and read as text, not markup")
        #expect(binary.last?.title == "test", "what decodes to no UTF-8 was not base64: kept as written")
        let atom03 = try items(
            """
            <feed version="0.3" xmlns="http://purl.org/atom/ns#"><entry><id>d</id>
              <title mode="base64">RXhhbXBsZSA8Yj5BdG9tPC9iPg==</title></entry></feed>
            """)
        #expect(atom03.first?.title == "Example <b>Atom</b>", "Atom 0.3's type is text/plain unless it says")
    }

    @Test func rss090AndRSSInADefaultNamespace() throws {
        let rss090 = try items(
            """
            <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" \
            xmlns="http://my.netscape.com/rdf/simple/0.9/">
              <channel><title>t</title></channel>
              <item><title>Old</title><link>https://d.example/old</link></item>
            </rdf:RDF>
            """)
        #expect(rss090.map(\.key) == ["https://d.example/old"])
        let namespaced = try items(
            """
            <rss version="2.0" xmlns="http://backend.userland.com/rss2"><channel><title>t</title>
              <item><guid isPermaLink="false">n1</guid><title>Namespaced</title></item></channel></rss>
            """)
        #expect(namespaced.map(\.title) == ["Namespaced"])
        let rss091 = try items(
            """
            <rss version="0.91"><channel><title>t</title>\
            <item><title>91</title><link>https://d.example/91</link></item></channel></rss>
            """)
        #expect(rss091.map(\.key) == ["https://d.example/91"])
    }

    @Test func rss1UsesRdfAboutAsTheIdAndDublinCore() throws {
        let read = try items(
            """
            <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/"
                     xmlns:dc="http://purl.org/dc/elements/1.1/">
              <item rdf:about="https://d.example/about/1"><dc:title>DC title</dc:title><dc:creator>someone</dc:creator>
                <link>https://d.example/1?ref=rss</link><dc:date>2024-05-01T00:00:00Z</dc:date></item>
            </rdf:RDF>
            """)
        #expect(read.first?.key == "https://d.example/about/1")
        #expect(read.first?.title == "DC title" && read.first?.link == "https://d.example/1?ref=rss")
        #expect(read.first?.published == "2024-05-01T00:00:00Z")
    }

    @Test func nothingInsideASourceOrANestedElementLeaksIntoTheEntry() throws {
        let atom = try items(
            """
            <feed xmlns="http://www.w3.org/2005/Atom"><entry><id>s1</id><title>Mine</title>
              <source><id>other-feed</id><title>Their feed</title><link href="https://other.example/"/>
                <updated>1999-01-01T00:00:00Z</updated></source>
              <link href="https://d.example/mine"/></entry></feed>
            """)
        #expect(
            atom == [
                FeedItem(
                    key: "s1", title: "Mine", link: "https://d.example/mine", pictureURL: nil,
                    published: nil, summary: nil)
            ])
        let rss = try items(
            """
            <rss version="2.0" xmlns:media="http://search.yahoo.com/mrss/"><channel><item>
              <category><image><link>https://wrong.example/</link><title>Wrong</title></image>news</category>
              <title>Right</title><link>https://d.example/right</link>
              <media:group><media:content url="https://d.example/in-group.jpg" medium="image"/></media:group>
            </item></channel></rss>
            """)
        #expect(rss.first?.title == "Right" && rss.first?.link == "https://d.example/right")
        #expect(rss.first?.pictureURL == "https://d.example/in-group.jpg", "media:content in a media:group counts")
    }

    @Test func entriesThatMakeNoItemAreNeverDroppedInSilence() throws {
        #expect(throws: FeedError.self) {
            try items(
                """
                <rss version="2.0"><channel><x:item xmlns:x="urn:unknown"><title>Lost?</title></x:item></channel></rss>
                """)
        }
        // An entry with nothing at all in it is nothing to show: skipped, not an error.
        #expect(
            try items("<rss version=\"2.0\"><channel><item></item><item><title>A</title></item></channel></rss>")
                .map(\.title) == ["A"])
    }

    @Test func episodesSharingALinkAreDifferentItems() throws {
        let read = try items(
            """
            <rss version="2.0"><channel><title>t</title>
              <item><title>Episode 2</title><link>https://d.example/show</link>
                <enclosure url="https://d.example/2.mp3" type="audio/mpeg" length="1"/></item>
              <item><title>Episode 1</title><link>https://d.example/show</link>
                <enclosure url="https://d.example/1.mp3" type="audio/mpeg" length="1"/></item>
              <item><title>Bonus</title><link>https://d.example/show</link></item>
              <item><title>Extra</title><link>https://d.example/show</link></item>
              <item><title>Alone</title><link>https://d.example/alone</link></item>
            </channel></rss>
            """)
        // An enclosure keys an item with its link always; a title only among items sharing the link.
        #expect(
            read.map(\.key) == [
                "https://d.example/show#https://d.example/2.mp3", "https://d.example/show#https://d.example/1.mp3",
                "https://d.example/show#Bonus", "https://d.example/show#Extra", "https://d.example/alone",
            ])
        #expect(read.allSatisfy { $0.link?.hasPrefix("https://d.example/") == true })
    }

    @Test func aStoryWithoutIdIsItsLinkNotItsPicture() throws {
        let read = try items(
            """
            <rss version="2.0"><channel><title>t</title>
              <item><title>Story</title><link>https://n.example/story</link>
                <enclosure url="https://cdn.example/story.jpg?w=600" type="image/jpeg" length="1"/></item>
              <item><title>Shared A</title><link>https://n.example/live</link>
                <enclosure url="https://cdn.example/a.jpg" type="image/jpeg" length="1"/></item>
              <item><title>Shared B</title><link>https://n.example/live</link></item>
              <item><title>Clip</title><link>https://n.example/clip</link>
                <enclosure url="https://cdn.example/clip.mp4" length="1"/></item>
            </channel></rss>
            """)
        #expect(
            read.map(\.key) == [
                "https://n.example/story", "https://n.example/live#Shared A",
                "https://n.example/live#Shared B", "https://n.example/clip#https://cdn.example/clip.mp4",
            ])
        // What the rules before gave them, where it differs: found in the store under it.
        #expect(
            read.map(\.formerKey) == [
                "https://n.example/story#https://cdn.example/story.jpg?w=600",
                "https://n.example/live#https://cdn.example/a.jpg", "https://n.example/live", nil,
            ])
    }

    @Test func picturesByMediumTypeExtensionAndItunes() throws {
        let read = try items(
            """
            <rss version="2.0" xmlns:media="http://search.yahoo.com/mrss/" \
            xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd">
            <channel><title>t</title>
              <item><guid>a</guid><media:content url="https://d.example/pic?id=1" medium="image"/></item>
              <item><guid>b</guid><media:content url="https://d.example/video.mp4" medium="video"/>
                <media:content url="https://d.example/plain.webp"/></item>
              <item><guid>c</guid><media:thumbnail url="https://d.example/thumb"/></item>
              <item><guid>d</guid><itunes:image href="https://d.example/cover"/></item>
            </channel></rss>
            """)
        #expect(
            read.map(\.pictureURL) == [
                "https://d.example/pic?id=1", "https://d.example/plain.webp", "https://d.example/thumb",
                "https://d.example/cover",
            ])
    }

    @Test func aJSONDocumentWithJSONFeedsFieldsIsJSONFeed() throws {
        let (format, page) = try decode(
            Data(
                """
                {"version": "1", "title": "t", "items": [{"id": "j", "url": "https://d.example/j", \
                "content_html": "<p>Hi</p>",
                 "date_published": "2021-02-03T04:05:06Z"}]}
                """.utf8), url: "https://d.example/feed.json")
        #expect(format == .jsonFeed)
        #expect(
            page.items.first?.link == "https://d.example/j" && page.items.first?.published == "2021-02-03T04:05:06Z")
    }

    @Test func brokenDateFormsFeedsWrite() {
        #expect(FeedDate.normalise("Mon, 21 Jan 2008 8:56 am PST") == "2008-01-21T16:56:00Z")
        #expect(FeedDate.normalise("Mon, 21 Jan 2008 8:56pm PST") == "2008-01-22T04:56:00Z")
        #expect(FeedDate.normalise("21 Jan 2008 12:05 a.m. EST") == "2008-01-21T05:05:00Z")
        #expect(FeedDate.normalise("2020/1/10 14:33:00") == "2020-01-10T14:33:00Z")
        #expect(FeedDate.normalise("2020/01/10") == "2020-01-10T00:00:00Z")
        #expect(FeedDate.normalise("Tue, 07 May 2024 09:30:00 AKDT") == "2024-05-07T17:30:00Z")
        #expect(FeedDate.normalise("Tue, 07 May 2024 09:30:00 NST") == "2024-05-07T13:00:00Z")
        #expect(FeedDate.normalise("Tue, 07 May 2024 09:30:00 HST") == "2024-05-07T19:30:00Z")
        // Ambiguous, so no date: which of day and month comes first. (IST is read as Irish
        // Standard Time, as the European feeds that write it in RFC 822 dates mean.)
        #expect(FeedDate.normalise("1/10/2020 14:33") == nil)
        #expect(FeedDate.normalise("Tue, 07 May 2024 09:30:00 IST") == "2024-05-07T08:30:00Z")
        #expect(FeedDate.normalise("Mon, 21 Jan 2008 13:56 pm PST") == nil)
    }
}
