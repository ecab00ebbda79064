import FeedSyncModel
import Foundation
import Testing

@testable import FeedSyncFeed
@testable import FeedSyncMarkup
@testable import FeedSyncPage

/// Decodes a fixture from Tests/FeedSyncTests/Fixtures as if served from `url`.
func fixture(_ name: String) throws -> Data {
    let folder = try #require(Bundle.module.url(forResource: "Fixtures", withExtension: nil))
    return try Data(contentsOf: folder.appendingPathComponent(name))
}

func decode(
    _ body: Data, url: String, format: FeedFormat? = nil, headers: [String: String] = [:], page: Int = 1
) throws -> (format: FeedFormat, page: FeedPage) {
    try FeedDocument.decode(body, format: format, context: DocumentContext(url: url, headers: headers, page: page))
}

@Suite struct RSSTests {
    @Test func readsEveryFieldThroughTheAwkwardCases() throws {
        let (format, page) = try decode(fixture("rss-awkward.xml"), url: "https://example.com/feed.xml")
        #expect(format == .rss)
        #expect(page.next == "https://example.com/feed.xml?page=2")
        #expect(page.hasMore == true)
        #expect(page.title == "Awkward & Co" && page.siteURL == "https://example.com/", "the channel's, not an item's")
        let items = page.items
        #expect(items.count == 6, "the duplicate guid is kept once")

        // CDATA title with markup; relative link trimmed and resolved; the enclosure beats the thumbnail.
        #expect(
            items[0]
                == FeedItem(
                    key: "tag:example.com,2024:1", title: "Bold & more", link: "https://example.com/posts/1",
                    pictureURL: "https://example.com/img/1.jpg", published: "2024-05-07T09:30:00Z", summary: nil))
        // Character references, double-escaped entities; no guid, so the link is the key; a broken date.
        #expect(items[1].key == "https://example.com/posts/2")
        #expect(items[1].title == "Café & crème …")
        #expect(items[1].published == "2024-05-07T07:30:00Z")
        #expect(items[1].pictureURL == "https://example.com/media/2.png")
        // Neither guid nor link: a hash of the title (a picture is no part of a key; it was, and is the
        // former key); the video is no picture, the thumbnail is.
        #expect(items[2].key == ItemKey.hash(title: "Third", pictureURL: nil))
        #expect(items[2].formerKey == ItemKey.hash(title: "Third", pictureURL: "https://example.com/thumb/3.jpg"))
        #expect(items[2].link == nil)
        #expect(items[2].pictureURL == "https://example.com/thumb/3.jpg")
        #expect(items[2].published == "2024-05-08T14:00:00Z")
        // A permalink guid is the link; the picture is the first <img> of content:encoded; dc:date.
        #expect(
            items[3]
                == FeedItem(
                    key: "https://example.com/posts/5", title: "Picture in the content",
                    link: "https://example.com/posts/5",
                    pictureURL: "https://example.com/pictures/5.png?w=1&h=2", published: "2024-05-09T06:00:00Z",
                    summary: "No picture here.",
                    content: #"<p>Look: <IMG alt="x" SRC="/pictures/5.png?w=1&amp;h=2"></p>"#),
            "content:encoded is the content; the description the summary")
        // No title: the start of the description stands in.
        #expect(items[4].title.hasPrefix("An item with no title at all") && items[4].title.hasSuffix("…"))
        #expect(items[4].title.count <= 81)
        // An audio enclosure is not a picture; the description's <img> is.
        #expect(items[5].pictureURL == "https://example.com/cover.gif")
    }

    @Test func readsRSS1AndRejectsMalformedXMLNamingTheLine() throws {
        let rdf = """
            <?xml version="1.0"?>
            <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/"
                     xmlns:dc="http://purl.org/dc/elements/1.1/">
              <channel rdf:about="https://x.example/"><title>t</title></channel>
              <item rdf:about="https://x.example/1"><title>One</title><link>https://x.example/1</link>
                <dc:date>2024-05-01</dc:date></item>
            </rdf:RDF>
            """
        let (format, page) = try decode(Data(rdf.utf8), url: "https://x.example/rss")
        #expect(format == .rss)
        #expect(page.items.map(\.key) == ["https://x.example/1"])
        #expect(page.items.first?.published == "2024-05-01T00:00:00Z")
        #expect(page.hasMore == false && page.next == nil)

        // Damage is read past, and said where; a document with no readable item is refused.
        let broken =
            "<rss><channel>\n<item><title>x</title>\n<link>y</item>\n<item><title>z</title></item></channel></rss>"
        let recovered = try decode(Data(broken.utf8), url: "https://x.example/").page
        #expect(recovered.items.map(\.title) == ["x", "z"])
        #expect(recovered.malformed?.hasPrefix("line 3, column") == true, "\(String(describing: recovered.malformed))")
        let cut = "<rss><channel>\n<item><title>x</title>\n<link>y</li"
        let error = #expect(throws: FeedError.self) { try decode(Data(cut.utf8), url: "https://x.example/") }
        #expect(error?.reason.contains("not well-formed at line 3") == true, "\(String(describing: error))")

        let html = "<!doctype html><html><body>Moved</body></html>"
        let notFeed = #expect(throws: FeedError.self) { try decode(Data(html.utf8), url: "https://x.example/") }
        #expect(notFeed?.reason.contains("a web page, not a feed") == true, "\(String(describing: notFeed))")
        let svg = #expect(throws: FeedError.self) { try decode(Data("<svg/>".utf8), url: "https://x.example/") }
        #expect(
            svg?.reason.contains("neither RSS nor Atom (its root element is <svg>)") == true,
            "\(String(describing: svg))")
    }

    @Test func readsDeclaredEncodingsAndExpandsNoEntityFromOutsideTheDocument() throws {
        func titles(_ body: Data) throws -> [String] {
            try decode(body, url: "https://x.example/").page.items.map(\.title)
        }
        func rss(_ title: String, prolog: String = "<?xml version=\"1.0\"?>") -> String {
            "\(prolog)<rss><channel><item><guid>g</guid><title>\(title)</title></item></channel></rss>"
        }

        let latin1 = rss("Caf\u{e9} cr\u{e8}me", prolog: "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?>")
        #expect(try titles(latin1.data(using: .isoLatin1)!) == ["Café crème"])
        let utf16 = rss("Grüße 🌍", prolog: "<?xml version=\"1.0\" encoding=\"UTF-16\"?>")
        #expect(try titles(utf16.data(using: .utf16)!) == ["Grüße 🌍"], "with its byte order mark")

        // Declared inside the document: expanded. Outside it (a file, the network): never read.
        let secret = FileManager.default.temporaryDirectory.appendingPathComponent("feedsync-secret-\(UUID())")
        try "SECRET-7731".write(to: secret, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: secret) }
        let entities = """
            <?xml version="1.0"?>
            <!DOCTYPE rss [
              <!ENTITY brand "Acme &amp; Co">
              <!ENTITY file SYSTEM "\(secret.absoluteString)">
              <!ENTITY remote SYSTEM "http://127.0.0.1:9/x">
            ]>
            <rss><channel><item><guid>g</guid><title>&brand; news [&file;] [&remote;]</title></item></channel></rss>
            """
        #expect(try titles(Data(entities.utf8)) == ["Acme & Co news [] []"])

        // A billion laughs: ten levels of ten references each.
        var laughs = "<?xml version=\"1.0\"?><!DOCTYPE rss [<!ENTITY l0 \"ha\">"
        for level in 1...10 {
            laughs += "<!ENTITY l\(level) \"" + String(repeating: "&l\(level - 1);", count: 10) + "\">"
        }
        laughs += "]>" + rss("&l10;", prolog: "")
        let bomb = #expect(throws: FeedError.self) { try titles(Data(laughs.utf8)) }
        #expect(bomb?.reason.contains("not well-formed") == true, "\(String(describing: bomb))")

        // A prefix nobody declared is a namespace error, not a broken document.
        let undeclared =
            "<rss><channel><item><guid>g</guid><title>t</title>"
            + "<media:content url=\"https://x.example/a.jpg\"/></item></channel></rss>"
        #expect(try titles(Data(undeclared.utf8)) == ["t"])
    }
}

@Suite struct AtomTests {
    @Test func readsTextConstructsXMLBaseAndPictureCarriers() throws {
        let (format, page) = try decode(fixture("atom-awkward.xml"), url: "https://example.org/atom.xml")
        #expect(format == .atom)
        #expect(page.next == "https://example.org/blog/atom.xml?page=2", "rel=next wins over prev-archive")
        #expect(page.title == "Atom awkward" && page.siteURL == nil, "a self link is not the site")
        let items = page.items
        #expect(items.map(\.key) == ["urn:uuid:1", "urn:uuid:2", "urn:uuid:3", "https://example.org/blog/posts/4"])
        #expect(
            items[0]
                == FeedItem(
                    key: "urn:uuid:1", title: "Hello & world", link: "https://example.org/blog/posts/1",
                    pictureURL: "https://example.org/img/1.png", published: "2024-05-01T10:00:00Z",
                    summary: "Plain summary.", content: "Plain summary."))
        #expect(items[1].title == "Some bold text")
        #expect(items[1].pictureURL == "https://cdn.example.net/2/pic.jpg", "resolved against the entry's xml:base")
        #expect(items[1].published == "2024-05-02T10:00:00Z", "updated stands in for published")
        #expect(items[2].title == "a < b")
        #expect(items[2].link == "https://example.org/blog/posts/3", "rel=related is not the link")
        #expect(items[2].pictureURL == "https://example.org/m/3.webp")
        #expect(items[2].published == "2024-05-03T13:00:00Z")
        #expect(items[3].pictureURL == "https://example.org/img/4.jpg")
    }

    @Test func xhtmlIsReadAsHTML() throws {
        let (_, page) = try decode(
            Data(
                """
                <feed xmlns="http://www.w3.org/2005/Atom"><title>t</title><entry><id>x</id>
                <title type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml">safe<script>location.href='x'</script> \
                <b>description</b><style>b{}</style></div></title>
                <content type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml" xmlns:h="http://www.w3.org/1999/xhtml">\
                <p class="a" xml:lang="en" h:x="1">A &lt; B &amp; C</p><p><a href="/x?a=1&amp;b=2">link</a><br/>\
                <img src="pic.png" alt='say "hi"'/></p><script>evil()</script></div></content></entry></feed>
                """.utf8), url: "https://d.example/feed")
        let item = try #require(page.items.first)
        #expect(item.title == "safe description", "a script's and a style's text are no title")
        #expect(
            item.content
                == "<div><p class=\"a\">A &lt; B &amp; C</p><p><a href=\"/x?a=1&amp;b=2\">link</a><br>"
                + "<img src=\"pic.png\" alt=\"say &quot;hi&quot;\"></p><script>evil()</script></div>",
            "elements written as HTML, text and attributes escaped, no prefixed attribute, no end for a void")
        #expect(item.summary == "A < B & C link", "its text without the script's")
        #expect(item.contentPictures?.map(\.url) == ["https://d.example/pic.png"])
        // RSS with an item's whole post in an XHTML `<body>`, as content:encoded holds it.
        let (_, rss) = try decode(
            Data(
                """
                <rss version="2.0"><channel><title>t</title><item><description>Short.</description>
                <body xmlns="http://www.w3.org/1999/xhtml"><p>The <em>whole</em> post.</p>\
                <img src="/cam.jpg" onload="location.href='x'"/></body></item></channel></rss>
                """.utf8), url: "https://d.example/feed")
        let post = try #require(rss.items.first)
        #expect(post.content == "<p>The <em>whole</em> post.</p><img src=\"/cam.jpg\" onload=\"location.href='x'\">")
        #expect(post.summary == "Short." && post.pictureURL == "https://d.example/cam.jpg")
        let (_, bare) = try decode(
            Data("<rss><channel><item><body><p>No <b>namespace</b>.</p></body></item></channel></rss>".utf8),
            url: "https://d.example/feed")
        #expect(bare.items.first?.content == "<p>No <b>namespace</b>.</p>")
        // HTML left unescaped ("naked") in an RSS description stays HTML; in a title, only its text.
        let (_, naked) = try decode(
            Data(
                """
                <rss><channel><item><guid>n</guid><title>A <b>bold</b> title</title>\
                <description>&lt;i&gt;Escaped&lt;/i&gt; and <p>naked, <a href="/x">linked</a></p></description>\
                </item></channel></rss>
                """.utf8), url: "https://d.example/feed")
        #expect(naked.items.first?.content == "<i>Escaped</i> and <p>naked, <a href=\"/x\">linked</a></p>")
        #expect(naked.items.first?.title == "A bold title")
        // Only HTML's elements: another namespace's, a prefixed or non-ASCII name gives its text.
        let (_, foreign) = try decode(
            Data(
                """
                <rss xmlns:ev="urn:ev"><channel><item><guid>f</guid><description>Meet <ev:title>at noon</ev:title>\
                <x:form>here</x:form> <цена>10</цена><BR/>now</description></item></channel></rss>
                """.utf8), url: "https://d.example/feed")
        #expect(foreign.items.first?.content == "Meet at noonhere 10<BR>now")
    }

    @Test func anXMLBaseInsideXHTMLResolvesWhatItHolds() throws {
        let (_, page) = try decode(
            Data(
                """
                <feed xmlns="http://www.w3.org/2005/Atom" xml:base="https://d.example/blog/"><title>t</title>
                <entry><id>x</id><title>x</title><content type="xhtml" xml:base="posts/">\
                <div xmlns="http://www.w3.org/1999/xhtml"><p xml:base="/elsewhere/"><a href="a.html">a</a>\
                <img src="p.png" srcset="p2.png 2x, https://cdn.example/p3.png 3x"/>\
                <a href="https://other.example/x">x</a></p><a href="b.html">b</a></div></content></entry></feed>
                """.utf8), url: "https://d.example/feed")
        let item = try #require(page.items.first)
        #expect(
            item.content
                == "<div><p><a href=\"https://d.example/elsewhere/a.html\">a</a>"
                + "<img src=\"https://d.example/elsewhere/p.png\" "
                + "srcset=\"https://d.example/elsewhere/p2.png 2x, https://cdn.example/p3.png 3x\">"
                + "<a href=\"https://other.example/x\">x</a></p><a href=\"b.html\">b</a></div>",
            "inside the nested xml:base absolute against it; outside, as written (read against the field's)")
        #expect(item.contentPictures?.map(\.url) == ["https://d.example/elsewhere/p2.png"])
    }

    @Test func xhtmlPastTheFieldLimitIsCutThere() throws {
        let spans = String(repeating: "<span class=\"c\">x &amp; y</span>", count: 100_000)  // 3.2 MB
        let started = ContinuousClock.now
        let (_, page) = try decode(
            Data(
                """
                <feed xmlns="http://www.w3.org/2005/Atom"><entry><id>x</id><title>t</title>\
                <content type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml">\(spans)</div></content>\
                </entry></feed>
                """.utf8), url: "https://d.example/feed")
        let content = try #require(page.items.first?.content)
        #expect(content.utf8.count <= FeedLimits.contentBytes && content.hasPrefix("<div><span class=\"c\">x &amp; y"))
        // Linear: 1.5 s in a debug build alone, several times that beside the rest of the suite on
        // two busy cores; a quadratic cost would take hours.
        #expect(ContinuousClock.now - started < .seconds(90))
    }

    @Test func followsPrevArchiveOfAnArchivedFeed() throws {
        let (_, page) = try decode(fixture("atom-archive.xml"), url: "https://example.org/feed.atom")
        #expect(page.next == "https://example.org/archive/2023-12.atom")
        #expect(page.items.map(\.key) == ["urn:uuid:a"])
    }
}

@Suite struct FeedTextTests {
    @Test func readsTheDateStylesFeedsUse() {
        let cases: [(String, String?)] = [
            ("2024-05-01T10:00:00Z", "2024-05-01T10:00:00Z"),
            ("2024-05-01T12:00:00+02:00", "2024-05-01T10:00:00Z"),
            ("2024-05-01 12:00:00", "2024-05-01T12:00:00Z"),
            ("2024-05-01T10:00:00.5-0130", "2024-05-01T11:30:00Z"),
            ("2024-05-01", "2024-05-01T00:00:00Z"),
            (" 2024-12-31t23:59:60z \n", "2024-12-31T23:59:59Z"),
            ("1000-01-01T00:00:00 Z", "1000-01-01T00:00:00Z"),
            ("2024-05-01T10:00:00X", "2024-05-01T10:00:00Z"),  // a military zone letter
            ("2024-05-01T10:00:00?", nil),
            ("2024-05-01T10", nil),
            ("2024-05-01T10:00:00Z later", nil),
            ("2024-5-01", "2024-05-01T00:00:00Z"),
            ("Wed, 01 May 2024 10:00:00 GMT", "2024-05-01T10:00:00Z"),
            ("wed, 01 may 2024 10:00:00 -0430", "2024-05-01T14:30:00Z"),
            ("Wed, 01 May 2024 10:00:00 +02:00 ", "2024-05-01T08:00:00Z"),
            ("Wed, 31 Apr 2024 10:00:00 GMT", nil),
            ("Wed, 01 May 2024 10:00:00 Mars", nil),
            ("Wed, 01 May 2024 10:00:00 GMT (UTC)", "2024-05-01T10:00:00Z"),
            ("Wed, 1 May 2024 10:00 +0200", "2024-05-01T08:00:00Z"),
            ("Wednesday, 01 May 2024 10:00:00 PDT", "2024-05-01T17:00:00Z"),
            ("01 May 24 10:00:00 +02:00", "2024-05-01T08:00:00Z"),
            ("Wed May 01 2024 10:00:00 GMT+0200 (CEST)", "2024-05-01T08:00:00Z"),
            ("1 September 2024", "2024-09-01T00:00:00Z"),
            ("29 Feb 2023 10:00:00 GMT", nil),
            ("yesterday", nil),
            ("", nil),
        ]
        for (input, expected) in cases {
            #expect(FeedDate.normalise(input) == expected, "\(input)")
        }
    }

    @Test func plainTextBecomesTheSameParagraphsFoundationsSearchesMade() {
        // What HTMLText.html(fromText:) was, on Foundation's string searches, as the oracle.
        func reference(_ text: String) -> String {
            text.replacingOccurrences(of: "\r\n", with: "\n")
                .components(separatedBy: "\n\n")
                .map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
                .filter { !$0.isEmpty }
                .map { "<p>" + HTMLText.escaped($0).replacingOccurrences(of: "\n", with: "<br>") + "</p>" }
                .joined(separator: "\n")
        }
        let texts = [
            "", "one", "one\n\ntwo", "a\r\n\r\nb\r\nc", "lone\rreturn\n\n\n\nx\r", "\r\r\n\n", "\n\n\n",
            "\u{A0} no-break \u{3000}\n\n\u{2028}\u{2029}\u{85}", "\"quoted\" & <tag>\nline\n", "e\u{301}\n\n\"\u{301}",
            "\ttab\u{B}\u{C}\n \n\u{200B}zero width\u{200B}", "日本語\n\n\u{1F600}\n\u{1F1EB}\u{1F1F7}",
        ]
        for text in texts {
            #expect(HTMLText.html(fromText: text) == reference(text), "\(text.debugDescription)")
            #expect(text.trimmed == text.trimmingCharacters(in: .whitespacesAndNewlines), "\(text.debugDescription)")
        }
        #expect(HTMLText.html(fromText: " a\r\n\r\nb & <c>\nd ") == "<p>a</p>\n<p>b &amp; &lt;c&gt;<br>d</p>")
    }

    @Test func aLinkEscapedTwiceMeansItsAmpersands() {
        #expect(
            XMLFeed.ampersandsUnescaped("https://e.com/?a=1&amp;amp;b=2&amp;c=3&d") == "https://e.com/?a=1&b=2&c=3&d")
        #expect(XMLFeed.ampersandsUnescaped("é&amp;amp;amp;&amp") == "é&&amp")
        #expect(XMLFeed.ampersandsUnescaped("&&amp;amp;;") == "&&;")
        #expect(XMLFeed.ampersandsUnescaped("no entity") == "no entity")
    }

    @Test func turnsHTMLIntoOneLineOfText() {
        #expect(HTMLText.plain("<p>One</p>\n<p>Two &amp; <b>three</b></p><script>x()</script>") == "One Two & three")
        #expect(HTMLText.plain("a < b && c") == "a < b && c")
        #expect(HTMLText.decodeEntities("&#8217;&#x2019;&unknown;&amp") == "’’&unknown;&amp")
        #expect(HTMLText.cut("one two three", to: 9) == "one two…")
        #expect(HTMLText.cut("one two", to: 7) == "one two")
        #expect(HTMLText.cut("né né", to: 4) == "né…")
        #expect(HTMLText.collapsingWhitespace("\u{A0} a\u{2003}\u{3000}b\r\n c\u{1F600} ") == "a b c\u{1F600}")
        #expect(HTMLText.plain("<STYLE>p{}</Style>é&nbsp;&#160;<br/>ü<x") == "é ü<x")
        #expect(HTMLText.firstImageSource(#"<a href="x"><img alt="a" data-src="no" src=y.png></a>"#) == "y.png")
        #expect(HTMLText.firstImageSource(#"é<IMG SRC = 'a.png?x=1&amp;y=2'>"#) == "a.png?x=1&y=2")
        #expect(HTMLText.firstImageSource("<img alt=\"src=no\"><img\tsrc=\"b.png\">") == "b.png")
        #expect(HTMLText.firstImageSource(#"<img src=""><img src"#) == nil)
        #expect(HTMLText.cut("a\r\nb c", to: 3) == "a\r\nb…", "CR LF is one character")
        #expect(HTMLText.cut("one two three four", to: 12) == "one two…")
    }

    @Test func aByteSearchFindsWhatContainsFinds() {
        for (text, part) in [
            ("lazy-placeholder.png", "lazy"), ("a.png", "a.png"), ("img/blank.gif", "blank."), ("", ""),
            ("display:none", "display:nonе"), ("abc", "abcd"), ("aab", "ab"), ("né.jpg", "é.j"), ("xyz", ""),
            ("ab", "b"), ("ab", "c"),
        ] {
            #expect(text.containsUTF8(part) == (part.isEmpty || text.contains(part)), "\(text) \(part)")
        }
    }

    @Test func aSummaryMadeFromPartOfTheHTMLIsTheSameAsFromAllOfIt() {
        let pieces = [
            "word", " ", "<p>", "</p>\n  ", "&amp;", "&nbsp;", "é", "漢字", "😀", "<script>x</script>", "\t\r\n",
            "&#8217;", "a < b", "<br/>", "ünïcödé",
        ]
        // Only ASCII, so the summary is cut as bytes.
        let asciiPieces = [
            "word", " ", "<p>", "</p>\n  ", "&amp;", "x", "<script>x</script>", "\t\r\n", "a < b", "<br/>",
            String(repeating: "long", count: 30),
        ]
        var generator = SystemRandomNumberGenerator()
        for (round, set) in (0..<600).map({ ($0, $0 % 2 == 0 ? pieces : asciiPieces) }) {
            let html = (0..<Int.random(in: 0...400, using: &generator)).map { _ in set.randomElement(using: &generator)!
            }.joined()
            for limit in [0, 1, 5, 80, HTMLText.summaryLength] {
                let whole = HTMLText.cut(HTMLText.plain(html), to: limit)
                #expect(
                    HTMLText.cut(HTMLText.plain(html, limit: limit), to: limit) == whole,
                    "round \(round), limit \(limit): \(html)")
                #expect(
                    HTMLText.summary(Array(html.utf8), limit: limit) == whole, "round \(round), limit \(limit): \(html)"
                )
            }
        }
    }

    /// The search index keeps no copy of what it indexed: a row leaves it only given the same text,
    /// made again from the item by this version's `SearchText` (Migrations/0009). So this text is
    /// pinned: a change to it, or to the HTML-to-text underneath, needs a migration that builds the
    /// index again (as 0009's Swift step does) before the stores written by this version change.
    @Test func theTextTheSearchIndexHoldsIsPinned() {
        #expect(SearchText.title("東京の天気 in Tokyo") == " 東  京  の  天  気  in Tokyo")
        #expect(
            SearchText.body(content: "<p>Pears &amp;\n <b>plums</b><script>x()</script></p>&nbsp;é", summary: "s")
                == "Pears & plums é")
        #expect(SearchText.body(content: nil, summary: "Only  a summary") == "Only  a summary")
        #expect(SearchText.body(content: "", summary: nil) == "")
        let long = SearchText.body(content: String(repeating: "word ", count: 7000), summary: nil)
        #expect(long.count == 32_765 && long.hasSuffix("word…"))
    }
}
