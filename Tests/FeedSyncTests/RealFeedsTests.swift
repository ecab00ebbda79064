import FeedSyncModel
import Foundation
import Testing

@testable import FeedSyncFeed
@testable import FeedSyncMarkup
@testable import FeedSyncPage

/// The last mile of real feeds (issue 30): text encoded twice, encoding labels as browsers read
/// them, items with nothing but a text or an enclosure, the dates people write, pictures where
/// feeds put them and links a browser would encode. Every document is a small one of our own.
@Suite struct RealFeedsTests {
    func items(_ body: Data, headers: [String: String] = [:]) throws -> [FeedItem] {
        try decode(body, url: "https://r.example/news/feed.xml", headers: headers).page.items
    }

    func items(_ xml: String) throws -> [FeedItem] { try items(Data(xml.utf8)) }

    func rss(_ items: String, channelTitle: String = "t", prolog: String = "<?xml version=\"1.0\"?>") -> String {
        "\(prolog)<rss version=\"2.0\"><channel><title>\(channelTitle)</title>\(items)</channel></rss>"
    }

    /// `text` encoded twice: its UTF-8 bytes read as windows-1252, written again as UTF-8.
    func twice(_ text: String) -> String {
        String(data: Data(text.utf8), encoding: .windowsCP1252)!
    }

    // MARK: 1. Text encoded twice

    @Test func textEncodedTwiceIsRepairedWhenAllOfItIs() throws {
        #expect(twice("Actualités") == "ActualitÃ©s", "the fixture is what publishers send")
        let document = rss(
            """
            <item><guid>1</guid><title>Le Monde.fr - \(twice("Actualités"))</title>
              <description>\(twice("Prix : £30 « net » – 5 million\u{A0}in Zürich…"))</description></item>
            <item><guid>2</guid><title>\(twice("Müller’s café"))</title></item>
            """, channelTitle: twice("Nouvelles du jour — été"))
        let page = try decode(Data(document.utf8), url: "https://r.example/feed").page
        #expect(page.items.map(\.title) == ["Le Monde.fr - Actualités", "Müller’s café"])
        #expect(page.items[0].summary == "Prix : £30 « net » – 5 million in Zürich…", "white space collapsed")
        #expect(page.items[0].content?.contains("£30 « net »") == true)
        #expect(page.title == "Nouvelles du jour — été")
    }

    @Test func textThatOnlyLooksEncodedTwiceIsLeftAsItIs() throws {
        // Genuine "Ã" and "Â" (Portuguese, a name), text in other scripts, and a field of which
        // only a part would decode: none is touched.
        let titles = [
            "São Paulo: Ãgua e Âmbar", "ÃO", "Âge", "Ã©tÃ© 東京", "café ActualitÃ©s €", "Ã", "naïve Ã©",
        ]
        let document = rss(titles.enumerated().map { "<item><guid>\($0)</guid><title>\($1)</title></item>" }.joined())
        #expect(try items(document).map(\.title) == titles)
        #expect(Mojibake.repaired("ActualitÃ©s") == "Actualités")
        #expect(Mojibake.repaired("plain ASCII") == "plain ASCII")
    }

    // MARK: 2. Encodings as browsers read their labels

    @Test func encodingLabelsAreReadAsBrowsersReadThem() throws {
        // TIS-620 declared, windows-874's curly quotes used: "“ไทย”".
        let thai: [UInt8] = [0x93, 0xE4, 0xB7, 0xC2, 0x94]
        let cases: [(label: String, bytes: [UInt8], title: String)] = [
            ("TIS-620", thai, "“ไทย”"), ("ISO-8859-11", thai, "“ไทย”"),
            ("US-ASCII", Array("don".utf8) + [0x92] + Array("t".utf8), "don’t"),
            ("ISO-8859-1", [0x93, 0x63, 0x61, 0x66, 0xE9, 0x94], "“café”"),
            // 中文 in GBK; "GB2312" labels read as GB18030, a superset.
            ("GB2312", [0xD6, 0xD0, 0xCE, 0xC4], "中文"),
            // 한국 in EUC-KR; 똠 (U+B620) only in windows-949.
            ("EUC-KR", [0xC7, 0xD1, 0xB1, 0xB9, 0x8C, 0x63], "한국똠"),
            // 日本 in Shift_JIS, then ① (0x8740), which only Windows-31J has.
            ("Shift_JIS", [0x93, 0xFA, 0x96, 0x7B, 0x87, 0x40], "日本①"),
            // 香港 in Big5.
            ("Big5", [0xAD, 0xBB, 0xB4, 0xE4], "香港"),
        ]
        for (label, bytes, title) in cases {
            let body =
                Data("<?xml version=\"1.0\" encoding=\"\(label)\"?><rss><channel><item><guid>1</guid><title>".utf8)
                + Data(bytes) + Data("</title></item></channel></rss>".utf8)
            #expect(try items(body).map(\.title) == [title], "\(label)")
        }
    }

    @Test func bytesThatAreNoUTF8InAUTF8DocumentAreReadAsWindows1252() throws {
        // "Café crème" with its accents in windows-1252, the rest UTF-8 ("—" and "✓" stay).
        let body =
            Data("<?xml version=\"1.0\" encoding=\"UTF-8\"?><rss><channel><item><guid>1</guid><title>Caf".utf8)
            + Data([0xE9, 0x20, 0x63, 0x72, 0xE8]) + Data("me — ✓ ".utf8) + Data([0x93, 0x71, 0x94])
            + Data("</title></item></channel></rss>".utf8)
        #expect(try items(body).map(\.title) == ["Café crème — ✓ “q”"])
        // A lone lead byte, a cut sequence and an overlong form: each byte one character.
        let odd =
            Data("<rss><channel><item><guid>1</guid><title>a".utf8) + Data([0xC3, 0x41, 0xE2, 0x82, 0x41, 0xC0, 0xAF])
            + Data("</title></item></channel></rss>".utf8)
        #expect(try items(odd).map(\.title) == ["aÃAâ‚AÀ¯"])
    }

    @Test func aCharacterCutByAChunkBoundaryIsReadWholeAndABrokenOneAsWindows1252() throws {
        // XMLFeed hands libxml2 256 KB at a time: put a whole character, and a broken one, across the cut.
        for shift in 0..<10 {  // the cut falls `shift` bytes into the title's text
            let padding = String(repeating: "x", count: (256 << 10) - 83 - shift)
            let head = Data(
                "<rss><channel><item><guid>0</guid><title>\(padding)</title></item><item><guid>1</guid><title>".utf8)
            let whole = head + Data("日本é".utf8) + Data("</title></item></channel></rss>".utf8)
            #expect(try items(whole).last?.title == "日本é", "shift \(shift)")
            let broken = head + Data([0xE6, 0x97, 0x41, 0xE9]) + Data("</title></item></channel></rss>".utf8)
            #expect(try items(broken).last?.title == "æ—Aé", "shift \(shift)")
        }
    }

    @Test func noStoredTitleHoldsAReplacementCharacterWhereTheBytesDecodeCleanly() throws {
        // Every byte value above ASCII, alone in a UTF-8 document and in one declared windows-1252:
        // each is a character of windows-1252's, never U+FFFD.
        for byte in UInt8(0x80)...0xFF {
            for prolog in [
                "<?xml version=\"1.0\" encoding=\"UTF-8\"?>", "<?xml version=\"1.0\" encoding=\"windows-1252\"?>",
            ] {
                let body =
                    Data("\(prolog)<rss><channel><item><guid>1</guid><title>a".utf8) + Data([byte])
                    + Data("b</title></item></channel></rss>".utf8)
                let title = try #require(try items(body).first).title
                #expect(!title.contains("\u{FFFD}"), "byte \(byte) in \(prolog)")
            }
        }
    }

    // MARK: 3. Items with no title, link or id

    @Test func anItemWithNothingButATextAnEnclosureOrADateIsKept() throws {
        let document = rss(
            """
            <item><description>A post with &lt;b&gt;only&lt;/b&gt; its text, long enough to be a title of its own.</description></item>
            <item><enclosure url="https://r.example/ep1.mp3" type="audio/mpeg" length="1"/></item>
            <item><media:content xmlns:media="http://search.yahoo.com/mrss/" url="https://r.example/clip.mp4" type="video/mp4"/></item>
            <item><dc:date xmlns:dc="http://purl.org/dc/elements/1.1/">2019-05-17T06:00:00Z</dc:date></item>
            <item><georss:point xmlns:georss="http://www.georss.org/georss">45.256 -71.92</georss:point><description>Here</description></item>
            <item></item>
            """)
        let found = try items(document)
        #expect(found.count == 5, "\(found.map(\.key))")
        #expect(found[0].title.hasPrefix("A post with only its text"))
        #expect(found[3].published == "2019-05-17T06:00:00Z")
        #expect(Set(found.map(\.key)).count == 5, "each keyed apart")
        // The same items read again are the same items.
        #expect(try items(document).map(\.key) == found.map(\.key))
    }

    @Test func aJSONFeedItemWithNothingButAnAttachmentOrADateIsKept() throws {
        let document = """
            {"version": "https://jsonfeed.org/version/1.1", "title": "j", "items": [
              {"attachments": [{"url": "https://r.example/ep2.mp3", "mime_type": "audio/mpeg"}]},
              {"date_published": "2024-05-01T10:00:00Z"},
              {}
            ]}
            """
        let found = try decode(Data(document.utf8), url: "https://r.example/feed.json").page.items
        #expect(found.count == 2 && Set(found.map(\.key)).count == 2, "\(found)")
        #expect(found.last?.published == "2024-05-01T10:00:00Z")
    }

    // MARK: 4. Dates people write

    @Test func theDatesPeopleWrite() {
        let cases: [(String, String?)] = [
            ("Fri, 17 May 2019 06:00:00 BST", "2019-05-17T05:00:00Z"),
            ("Sun, 20 Apr 2014 8:19 pm CEST", "2014-04-20T18:19:00Z"),
            ("Mon, 06 Jan 2020 10:00:00 CET", "2020-01-06T09:00:00Z"),
            ("Mon, 06 Jan 2020 10:00:00 IST", "2020-01-06T09:00:00Z"),
            ("Tue, 07 Jul 2020 10:00:00 EEST", "2020-07-07T07:00:00Z"),
            ("Tue, 07 Jan 2020 10:00:00 EET", "2020-01-07T08:00:00Z"),
            ("Tue, 07 Jan 2020 10:00:00 WET", "2020-01-07T10:00:00Z"),
            ("Tue, 07 Jul 2020 10:00:00 WEST", "2020-07-07T09:00:00Z"),
            ("Tue, 07 Jan 2020 10:00:00 MSK", "2020-01-07T07:00:00Z"),
            ("2022-09-03 09:37:11+03:00", "2022-09-03T06:37:11Z"),
            ("2005-5-28 16:05:36", "2005-05-28T16:05:36Z"),
            ("2005-05-8 6:05:36", "2005-05-08T06:05:36Z"),
            // Still no guess: a zone name no one agrees on, and day-month order.
            ("Tue, 07 Jan 2020 10:00:00 XYZT", nil),
            ("01/02/2020 10:00", nil),
        ]
        for (text, expected) in cases {
            #expect(FeedDate.normalise(text) == expected, "\(text)")
        }
    }

    // MARK: 5. Pictures where feeds put them

    @Test func picturesInThePlacesFeedsPutThem() throws {
        let document = rss(
            """
            <item><guid>1</guid><title>a</title><image>/img/a.jpg</image></item>
            <item><guid>2</guid><title>b</title><image url="../img/b.png"/></item>
            <item><guid>3</guid><title>c</title><media:thumbnail xmlns:media="http://search.yahoo.com/mrss/" url="img/c.webp"/></item>
            <item><guid>4</guid><title>d</title><enclosure url="https://cdn.r.example/d.JPG?w=600" length="0"/></item>
            <item><guid>5</guid><title>e</title><description>&lt;p&gt;x &lt;img src="/e.gif"&gt;&lt;/p&gt;</description></item>
            """)
        #expect(
            try items(document).map(\.pictureURL) == [
                "https://r.example/img/a.jpg", "https://r.example/img/b.png", "https://r.example/news/img/c.webp",
                "https://cdn.r.example/d.JPG?w=600", "https://r.example/e.gif",
            ])
    }

    // MARK: 6. Links a browser would encode

    @Test func linksAreStoredAsABrowserWouldAskForThem() throws {
        let document = rss(
            """
            <item><guid>1</guid><title>a</title><link>https://r.example/a story|part 1?q=x y#top</link></item>
            <item><guid>2</guid><title>b</title><link>https://r.example/статья/ünï</link></item>
            <item><guid>3</guid><title>c</title><link>/relative path/é</link></item>
            <item><guid>4</guid><title>d</title><link>https://r.example/already%20encoded?a=%C3%A9</link></item>
            """)
        #expect(
            try items(document).map(\.link) == [
                "https://r.example/a%20story%7Cpart%201?q=x%20y#top",
                "https://r.example/%D1%81%D1%82%D0%B0%D1%82%D1%8C%D1%8F/%C3%BCn%C3%AF",
                "https://r.example/relative%20path/%C3%A9",
                "https://r.example/already%20encoded?a=%C3%A9",
            ])
    }

    // MARK: 7. The last misses (issue 42)

    @Test func anISODateWithASpaceBeforeTheTimeIsRead() throws {
        let document = rss("<item><guid>1</guid><title>a</title><pubDate>2022-09-03 09:37:11+03:00</pubDate></item>")
        #expect(try items(document).map(\.published) == ["2022-09-03T06:37:11Z"])
    }

    @Test func atom03DatesAreIssuedThenCreatedThenModifiedAndNeverAnotherElementsDate() throws {
        let document = """
            <?xml version="1.0"?><feed version="0.3" xmlns="http://purl.org/atom/ns#"
              xmlns:dc="http://purl.org/dc/elements/1.1/"><title>t</title>
            <entry><id>1</id><title>a</title><modified>2004-03-03T10:00:00Z</modified>
              <created>2004-02-02T10:00:00Z</created><issued>2004-01-01T10:00:00Z</issued></entry>
            <entry><id>2</id><title>b</title><modified>2004-03-03T10:00:00Z</modified>
              <created>2004-02-02T10:00:00Z</created></entry>
            <entry><id>3</id><title>c</title><modified>2004-03-03T10:00:00Z</modified></entry>
            <entry><id>4</id><title>d</title><issued>2004-01-01T10:00:00Z</issued>
              <author><name>n</name><dc:date>2009-09-09T09:09:09Z</dc:date></author></entry>
            <entry><id>5</id><title>e</title><issued>2004-01-01T10:00:00Z</issued>
              <dc:date>2009-09-09T09:09:09Z</dc:date></entry>
            </feed>
            """
        let dates = try items(document).map(\.published)
        #expect(
            dates == [
                "2004-01-01T10:00:00Z", "2004-02-02T10:00:00Z", "2004-03-03T10:00:00Z", "2004-01-01T10:00:00Z",
                "2004-01-01T10:00:00Z",
            ],
            "\(dates)")
    }

    @Test func picturesFromAMediaGroupARelativeThumbnailAndAnItemsImage() throws {
        let document = rss(
            """
            <item><guid>1</guid><title>a</title><media:group xmlns:media="http://search.yahoo.com/mrss/">
              <media:content url="https://v.example/clip.mp4" medium="video"/>
              <media:content url="https://cdn.example/still?id=7" medium="image"/></media:group></item>
            <item xml:base="https://other.example/blog/"><guid>2</guid><title>b</title>
              <media:thumbnail xmlns:media="http://search.yahoo.com/mrss/" url="thumbs/b.jpg"/></item>
            <item><guid>3</guid><title>c</title><image><url>https://r.example/c.png</url><title>c</title></image></item>
            """)
        let pictures = try items(document).map(\.pictureURL)
        #expect(
            pictures == [
                "https://cdn.example/still?id=7", "https://other.example/blog/thumbs/b.jpg", "https://r.example/c.png",
            ], "\(pictures)")
    }

    @Test func aLinkOrGuidEscapedTwiceInsideCDATAIsStoredAsThePublisherMeantIt() throws {
        let document = rss(
            """
            <item><title>a</title><link><![CDATA[https://r.example/a?x=1&amp;amp;y=2]]></link>
              <guid><![CDATA[https://r.example/a?x=1&amp;amp;y=2]]></guid></item>
            <item><title>b</title><link><![CDATA[https://r.example/b?x=1&amp;y=2]]></link></item>
            """)
        let read = try items(document)
        #expect(read.map(\.link) == ["https://r.example/a?x=1&y=2", "https://r.example/b?x=1&y=2"])
        #expect(read[0].key == "https://r.example/a?x=1&y=2")
        #expect(read[0].formerKey == "https://r.example/a?x=1&amp;amp;y=2", "found under its earlier key")
    }

    @Test func aPicturesURLIsNeverPartOfAnItemsKey() throws {
        // Two items sharing link and title are one story, whatever pictures they carry; items with
        // no id or link are keyed by their title alone.
        let document = rss(
            """
            <item><title>Same</title><link>https://r.example/s</link><enclosure url="https://cdn.example/1.jpg" type="image/jpeg"/></item>
            <item><title>Same</title><link>https://r.example/s</link><enclosure url="https://cdn.example/2.jpg" type="image/jpeg"/></item>
            <item><title>Other</title><link>https://r.example/s</link><enclosure url="https://cdn.example/3.jpg" type="image/jpeg"/></item>
            <item><title>No link</title><enclosure url="https://cdn.example/4.jpg" type="image/jpeg"/></item>
            """)
        let read = try items(document)
        #expect(
            read.map(\.key) == ["https://r.example/s#Same", "https://r.example/s#Other", read[2].key]
                && read[2].key.hasPrefix("h:"), "the two sharing link and title stored once: \(read.map(\.key))")
        let again = try items(document.replacingOccurrences(of: "4.jpg", with: "4-renamed.jpg"))
        #expect(again[2].key == read[2].key, "a CDN renaming the picture changes no key")
        // Stores that keyed them by link and picture, or title and picture, find them by these.
        #expect(read[0].formerKey == "https://r.example/s#https://cdn.example/1.jpg")
        #expect(read[2].formerKey == ItemKey.hash(title: "No link", pictureURL: "https://cdn.example/4.jpg"))
    }

    @Test func mediaRSSWithItsPrefixUndeclaredAtomStyleLinksAndIdsInRSSAndAGuidThatIsNoURL() throws {
        let document = rss(
            """
            <item><title>a</title><media:content url="https://cdn.example/a.png" medium="image"/></item>
            <item><title>b</title><link href="https://r.example/b"/><id>urn:uuid:b</id></item>
            <item><guid isPermaLink="true">http://example.c[o.test/</guid><title>c</title></item>
            """)
        let read = try items(document)
        #expect(read.map(\.pictureURL) == ["https://cdn.example/a.png", nil, nil])
        #expect(read.map(\.link) == [nil, "https://r.example/b", nil], "a guid that is no URL is no link")
        #expect(read[1].key == "urn:uuid:b")
    }
}
