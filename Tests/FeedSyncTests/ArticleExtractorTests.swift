import FeedSyncModel
import Foundation
import Testing

@testable import FeedSyncFeed
@testable import FeedSyncMarkup
@testable import FeedSyncPage

/// The article extractor on small pages of our own, one case each (the 130 pages of
/// `../shared/articles` measure it as a whole: docs/usage.md, "Whole articles").
@Suite struct ArticleExtractorTests {
    static let paragraph =
        "The council met on Tuesday evening, and after a long debate, it voted to keep the library open "
        + "for another year, funded by a small levy on parking, which most residents supported."

    static func extract(_ html: String, url: String = "https://news.example/2026/story.html") throws
        -> ExtractedArticle
    {
        try #require(try ArticleExtractor.extract(Array(html.utf8), url: url))
    }

    @Test func clutterGoesAndTheArticleAndItsMetadataStay() throws {
        let page = """
            <!doctype html><html lang="en-GB"><head><title>Library saved | Town News</title>
            <meta property="og:title" content="Library saved for another year">
            <meta name="author" content="Ann Writer">
            <meta property="article:published_time" content="2026-03-04T10:00:00+01:00">
            <meta name="description" content="The council keeps the library open.">
            </head><body>
            <nav class="menu"><a href="/">Home</a> <a href="/news">News</a> <a href="/sport">Sport</a></nav>
            <div class="cookie-banner">We use cookies, to make this site work, and to measure it, all the time.</div>
            <div id="main"><article class="post">
            <h1>Library saved for another year</h1>
            <p>\(Self.paragraph)</p><p>\(Self.paragraph)</p><p>\(Self.paragraph)</p>
            <div class="share-bar"><a href="https://social.example/share">Share</a> <a href="#">Tweet</a></div>
            </article></div>
            <section id="comments"><p>First! This comment is long enough to be scored, surely, by any reader view.</p></section>
            <aside class="related"><a href="/a">Another story about the council</a></aside>
            <footer>Copyright Town News</footer>
            </body></html>
            """
        let article = try Self.extract(page)
        #expect(article.title == "Library saved for another year")
        #expect(article.byline == "Ann Writer")
        #expect(article.published == "2026-03-04T09:00:00Z")
        #expect(article.lang == "en-GB")
        #expect(article.excerpt == "The council keeps the library open.")
        #expect(article.readerable)
        #expect(article.text.components(separatedBy: "levy on parking").count == 4, "the three paragraphs")
        for clutter in ["Home", "cookies", "Share", "First!", "Another story", "Copyright"] {
            #expect(!article.text.contains(clutter), "\(clutter) is not the article")
        }
    }

    @Test func lazyPicturesBecomeRealAndLinksAbsoluteAndScriptLinksText() throws {
        let page = """
            <html><body><article>
            <p>\(Self.paragraph)</p>
            <img src="data:image/gif;base64,R0lGODlhAQABAAAAACw=" data-src="/media/first.jpg" alt="first">
            <p>\(Self.paragraph)</p>
            <div><img src="/placeholder.png" class="lazy"><noscript><img src="pictures/second.png"></noscript></div>
            <p>\(Self.paragraph) <a href="../about.html">About us</a> and <a href="javascript:void(0)">more</a>.</p>
            <img src="/third.jpg" srcset="/img/w_300,h_200/third.jpg 300w,
                third-large.jpg 900w">
            </article></body></html>
            """
        let article = try Self.extract(page)
        #expect(
            article.content.contains(
                "srcset=\"https://news.example/img/w_300,h_200/third.jpg 300w, https://news.example/2026/third-large.jpg 900w\""
            ),
            "a comma inside a candidate's URL is the URL's: \(article.content)")
        #expect(article.content.contains("src=\"https://news.example/media/first.jpg\""))
        #expect(article.content.contains("src=\"https://news.example/2026/pictures/second.png\""))
        #expect(!article.content.contains("placeholder.png"), "the noscript copy replaces the placeholder")
        #expect(article.content.contains("href=\"https://news.example/about.html\""))
        #expect(!article.content.contains("javascript:"))
        #expect(article.text.contains("and more."), "the script link's text stays")
        // The srcset's candidate for the reading column.
        let pictures = ArticlePictures.find(in: Array(article.content.utf8), base: nil).map(\.url)
        #expect(
            pictures == [
                "https://news.example/media/first.jpg", "https://news.example/2026/pictures/second.png",
                "https://news.example/2026/third-large.jpg",
            ])
    }

    /// A text node is measured from its UTF-8 bytes: as its Unicode scalars would be, with every
    /// White_Space scalar a space and both commas counted.
    @Test func textIsMeasuredAsItsUnicodeScalarsAre() {
        let spaces: [Unicode.Scalar] = [
            "\t", "\n", "\u{0B}", "\u{0C}", "\r", " ", "\u{85}", "\u{A0}", "\u{1680}", "\u{2000}", "\u{2005}",
            "\u{200A}", "\u{2028}", "\u{2029}", "\u{202F}", "\u{205F}", "\u{3000}",
        ]
        let others: [Unicode.Scalar] = [
            "a", ",", "\u{FF0C}", "\u{200B}", "\u{180E}", "\u{2060}", "é", "\u{301}", "東", "\u{1F600}", "\u{FEFF}",
            "\u{E2}", "\u{2030}", "\u{FF0D}",
        ]
        let alphabet = spaces + others
        var generator = SystemRandomNumberGenerator()
        var texts = alphabet.map { String(Character($0)) } + ["", "  ", " a, b ,c  ", "\u{3000}東京,\u{FF0C} \u{2028}"]
        for _ in 0..<500 {
            var scalars = String.UnicodeScalarView()
            for _ in 0..<Int.random(in: 1...12, using: &generator) {
                scalars.append(alphabet.randomElement(using: &generator)!)
            }
            texts.append(String(scalars))
        }
        for text in texts {
            var expected = DOMNode.TextMetrics()
            var pendingSpace = false
            for scalar in text.unicodeScalars {
                expected.scalars += 1
                if scalar.properties.isWhitespace {
                    if expected.collapsed == 0 { expected.leading += 1 } else { pendingSpace = true }
                    expected.trailing += 1
                } else {
                    expected.collapsed += pendingSpace ? 2 : 1
                    pendingSpace = false
                    expected.trailing = 0
                    if scalar == "," || scalar == "\u{FF0C}" { expected.commas += 1 }
                }
            }
            if expected.collapsed == 0 { expected.trailing = 0 }
            let measured = DOMArena().node("#text", text: text).metrics
            let got: [Int] = [
                measured.scalars, measured.collapsed, measured.leading, measured.trailing, measured.commas,
            ]
            let wanted: [Int] = [
                expected.scalars, expected.collapsed, expected.leading, expected.trailing, expected.commas,
            ]
            #expect(
                got == wanted,
                "\(text.unicodeScalars.map { String($0.value, radix: 16) })")
        }
    }

    /// The extractor's tree is built from libxml2's parser events: node for node the tree libxml2's
    /// own builder makes of the same page (read here as `htmlReadMemory` reads it, and copied).
    @Test func theTreeIsTheOneLibxml2Builds() throws {
        let text = Self.paragraph
        let deep = String(repeating: "<div>", count: 300) + "<p>deep</p>" + String(repeating: "</div>", count: 300)
        let written: [String] = [
            "<html><body>\(deep)<p>after</p></body></html>",
            "<html><body><fb:like href=x></fb:like><o:p>o</o:p><x:y:z>xyz</x:y:z><:odd>o</:odd><end:>e</end:>",
            "<!DOCTYPE html><html><body><p>\(text)</p></body></html><p>after html</p><div>more</div>",
            "<html><body><p>\(text)</p></body></html><p>after html</p>",
            "<!-- first --><html><body><p>\(text)</p></body></html><p>after</p>",
            "<?php echo 1 ?><html><body><p>x</p></body></html><p>after</p>",
            "<!DOCTYPE HTML PUBLIC \"-//W3C//DTD HTML 4.01//EN\"><html><body>\n  <p>a</p>\n  <p>b</p> </body></html>",
            "<p>\(text)<!-- c -->after &amp; &#x41; <?pi x?>pi</p><script>var a = 1; // </p></script><style>p{}</style>",
            "<p><![CDATA[ cdata ]]> x</p><img src=a.jpg ismap alt><input disabled checked value><details open>d</details>",
            "  leading text <html><body><p>body</p></body></html>",
            "<html><frameset><frame src=a></frameset><body><p>x</p></body></html>",
            "<table><tr><td>cell</td></tr><tr><td><p>para</td></tr></table><ul><li>one<li>two</ul>",
            "<p>nul \u{0} after</p><wbr>after wbr<source>after source",
            "<p>before</p><!DOCTYPE html><p>after doctype</p></body></html><p>after html</p>",
            "<p>cut off <b class=",
            // A text node past 10 000 000 bytes stops libxml2's tree builder.
            "<p>\(String(repeating: "word ", count: 2_000_100))</p><p>not reached</p>",
        ]
        var pages = written.map { Array($0.utf8) }
        pages.append(Array("<p>caf".utf8) + [0xE9] + Array(" na".utf8) + [0xEF] + Array("ve</p>".utf8))
        pages.append(Array("<meta charset=utf-8><p>bad ".utf8) + [0xFF, 0xFE] + Array(" bytes</p>".utf8))
        for page in pages {
            let arena = DOMArena()
            let built = try #require(try DOMNode.parse(page, into: arena))
            let copied = try #require(try Self.libxml2Tree(page, into: arena))
            #expect(Self.outline(built) == Self.outline(copied), "\(String(decoding: page.prefix(80), as: UTF8.self))")
        }
    }

    /// libxml2's own tree of `html`, copied into nodes.
    static func libxml2Tree(_ html: [UInt8], into arena: DOMArena) throws -> DOMNode? {
        let xml = try LibXML2.shared.get()
        let encoding = String(validating: html, as: UTF8.self) != nil ? "UTF-8" : nil
        guard
            let document = html.withUnsafeBufferPointer({ buffer in
                buffer.withMemoryRebound(to: CChar.self) {
                    xml.readHTML($0.baseAddress, Int32($0.count), nil, encoding, 1 | 32 | 64 | 2048)
                }
            })
        else { return nil }
        defer { xml.freeDocument(document) }
        let root = arena.node("#document")
        var stack = [root]
        XMLTree.walk(document) { element in
            var attributes: [(name: String, value: String)] = []
            var property = element.node.pointee.properties
            while let current = property {
                attributes.append((current.pointee.name.map(XMLTree.lowercased) ?? "", XMLTree.value(of: current)))
                property = current.pointee.next
            }
            let node = arena.node(element.name, attributes: attributes)
            stack.last!.append(node)
            stack.append(node)
            return true
        } text: {
            var text = String(cString: $0)
            if text.utf8.count > DOMNode.maxNodeTextBytes {
                text = HTMLText.cut(text, to: DOMNode.maxNodeTextBytes / 4)
            }
            stack.last!.append(arena.node("#text", text: text))
        } leave: { _ in
            stack.removeLast()
        }
        return root
    }

    /// Every node, its depth, name, attributes and text, one a line.
    static func outline(_ node: DOMNode) -> String {
        var out = ""
        var stack = [(node, 0)]
        while let (node, depth) = stack.popLast() {
            let what =
                node.isText ? "\"\(node.text)\"" : node.tag + node.attributes.map { " \($0.name)=\($0.value)" }.joined()
            out += String(repeating: " ", count: depth) + what + "\n"
            stack += node.children.reversed().map { ($0, depth + 1) }
        }
        return out
    }

    /// An article cut to `maxContentBytes` is made safe from what is kept of it, as what a pull
    /// stores is shown.
    @Test func aCutArticleIsMadeSafeFromWhatIsKept() throws {
        let paragraphs = String(repeating: "<p>\(Self.paragraph)</p>", count: 1 << 20 / Self.paragraph.utf8.count + 10)
        let page = "<html><body><article>\(paragraphs)</article></body></html>"
        let url = "https://news.example/2026/story.html"
        let article = try #require(try ArticleExtractor.extract(Array(page.utf8), url: url, safe: true))
        #expect(article.content.utf8.count <= ArticleExtractor.maxContentBytes)
        #expect(article.safeContent == (try SafeHTML.clean(article.content, base: url, picture: { _, url in url })))
    }

    /// libxml2's HTML 4 parser puts what follows a void element it does not know inside it.
    @Test func whatFollowsAnUnknownVoidElementIsStoredAfterIt() throws {
        let article = try Self.extract(
            """
            <html><body><article><p>\(Self.paragraph)</p>
            <p>\(Self.paragraph) Super<wbr>cali<wbr>fragilistic, the rest of the sentence.</p>
            <picture><source srcset="/big.webp"><img src="small.jpg" alt="small"></picture>
            <p>\(Self.paragraph)</p></article></body></html>
            """)
        #expect(article.content.contains("cali<wbr>fragilistic, the rest of the sentence.</p>"), "\(article.content)")
        #expect(article.content.contains("<source srcset=\"https://news.example/big.webp\"><img alt=\"small\" src="))
        #expect(
            ArticlePictures.find(in: Array(article.content.utf8), base: nil).map(\.url) == [
                "https://news.example/big.webp"
            ])
    }

    /// `extract --json` writes the safe HTML from the extractor's tree; the page shows the stored
    /// HTML made safe by reading it again. Both by the same rules, to the same HTML.
    @Test func theSafeContentIsWhatSafeHTMLMakesOfTheStoredContent() throws {
        let page = """
            <html><body><article>
            <p>\(Self.paragraph) <b onclick="steal()" style="color:red" class="x">bold</b> &lt;script&gt;</p>
            <p>\(Self.paragraph) <a href="mailto:desk@news.example">Write</a>, <a href="/about" id="a">about</a>,
            <a href="ftp://files.example/x">files</a>. <custom-tag>unwrapped</custom-tag> 2<sup>10</sup>
            Super<wbr>cali<wbr>fragilistic, the rest of the sentence. <x:y:script>alert(1)</x:y:script></p>
            <picture><source type="image/x-unknown" srcset="big.unknown"><source srcset="/big.webp 1x, /big2.webp 2x">
            <img src="small.jpg" alt="a &amp; b" width="640" height="480" title="t"></picture>
            <img src="/pixel.gif" width="1" height="1"><img src="/wide.png" alt="wide" width="123456">
            <p>\(Self.paragraph) <span title="\(String(repeating: "x", count: 9000))">long title</span></p>
            <figure><img src="data:image/png;base64,AAAA" alt="inline"><figcaption>A caption</figcaption></figure>
            </article></body></html>
            """
        let url = "https://news.example/2026/story.html"
        let article = try #require(try ArticleExtractor.extract(Array(page.utf8), url: url, safe: true))
        let safe = try #require(article.safeContent)
        #expect(safe == (try SafeHTML.clean(article.content, base: url, picture: { _, url in url })))
        for kept in [
            "<b>bold</b> &lt;script&gt;", "<a href=\"mailto:desk@news.example\" target=\"_blank\"",
            "<a href=\"https://news.example/about\"", "<a>files</a>", "unwrapped", "<sup>10</sup>",
            "<img src=\"https://news.example/big.webp\" loading=\"lazy\" width=\"640\" height=\"480\" title=\"t\" alt=\"a &amp; b\">",
            "<span>long title</span>", "Supercalifragilistic, the rest",
            "<span class=\"missing-picture\">[inline]</span>",
            "<img src=\"https://news.example/wide.png\" loading=\"lazy\" alt=\"wide\">",
        ] {
            #expect(safe.contains(kept), "\(kept) in \(safe)")
        }
        for gone in ["onclick", "style", "class=\"x\"", "id=", "unknown", "pixel.gif", "custom-tag", "xxxx", "alert"] {
            #expect(!safe.contains(gone), "\(gone) in \(safe)")
        }
        #expect(try ArticleExtractor.extract(Array(page.utf8), url: url)?.safeContent == nil, "only when asked")
    }

    @Test func metaNamesAreReadInAnyCaseWithDotsAndDashesAsColons() throws {
        #expect(ArticleExtractor.Metadata.metaName(" DC.Creator ") == "dc:creator")
        #expect(ArticleExtractor.Metadata.metaName("twitter-title") == "twitter:title")
        let page = """
            <html><head><meta name="DC.Title" content="The council's library"><meta name="Dc-Creator" content="Ann">
            </head><body><article><p>\(Self.paragraph)</p><p>\(Self.paragraph)</p></article></body></html>
            """
        let article = try Self.extract(page)
        #expect(article.title == "The council's library" && article.byline == "Ann")
    }

    @Test func jsonLDNamesTheHeadlineAndAuthors() throws {
        let page = """
            <html><head><title>Home | Site</title><script type="application/ld+json">
            {"@context": "https://schema.org", "@type": "NewsArticle", "headline": "The &amp; headline",
             "author": [{"@type": "Person", "name": "Ann"}, {"@type": "Person", "name": "Bo"}],
             "datePublished": "2026-01-02T03:04:05Z", "publisher": {"name": "The Site"}}
            </script></head><body><div class="content"><p>\(Self.paragraph)</p><p>\(Self.paragraph)</p></div></body></html>
            """
        let article = try Self.extract(page)
        #expect(article.title == "The & headline")
        #expect(article.byline == "Ann, Bo")
        #expect(article.published == "2026-01-02T03:04:05Z")
        #expect(article.siteName == "The Site")
    }

    @Test func theTitleLosesTheSiteNameAfterItsSeparator() throws {
        let page = """
            <html><head><title>How the library was saved by the town - Town News</title></head>
            <body><article><p>\(Self.paragraph)</p><p>\(Self.paragraph)</p></article></body></html>
            """
        #expect(try Self.extract(page).title == "How the library was saved by the town")
    }

    @Test func breaksMakeParagraphsAndSiblingParagraphsJoin() throws {
        let page = """
            <html><body><div id="story">\(Self.paragraph)<br><br>\(Self.paragraph)<br><br>\(Self.paragraph)</div>
            <p>A short closing line that ends the story.</p>
            <div class="sidebar"><p>Subscribe to our newsletter, today, for more stories, every morning.</p></div>
            </body></html>
            """
        let article = try Self.extract(page)
        #expect(article.text.components(separatedBy: "\n\n").filter { $0.contains("levy") }.count == 3)
        #expect(article.text.contains("A short closing line"))
        #expect(!article.text.contains("Subscribe"))
    }

    @Test func aFrontPageOfLinksDoesNotReadAsAnArticle() throws {
        let links = (1...40).map { "<li><a href=\"/story/\($0)\">Story number \($0) of the day</a></li>" }
        let page = "<html><body><ul>\(links.joined())</ul></body></html>"
        let article = try ArticleExtractor.extract(Array(page.utf8), url: "https://news.example/")
        #expect(article?.readerable != true)
        #expect(
            try ArticleExtractor.extract(Array("<html><body></body></html>".utf8), url: "https://x.example/") == nil)
    }

    @Test func hostilePagesStayBoundedInTimeAndMemory() throws {
        // A hundred thousand levels deep, a megabyte of attributes, one text node of 4 MB, broken UTF-8.
        let deep = String(repeating: "<div>", count: 100_000) + "<p>\(Self.paragraph)</p>"
        let attributes =
            "<p " + (0..<20_000).map { "a\($0)=\"\(String(repeating: "x", count: 50))\"" }.joined(separator: " ")
            + ">\(Self.paragraph)</p>"
        let long = "<p>" + String(repeating: "word, ", count: 700_000) + "</p>"
        var broken = Array("<html><body><article><p>".utf8) + [0xC3, 0x28, 0xFF, 0xFE] + Array(Self.paragraph.utf8)
        broken += Array("</p></article></body></html>".utf8)
        let started = Date()
        for page in [Array(deep.utf8), Array(attributes.utf8), Array(long.utf8), broken] {
            _ = try ArticleExtractor.extract(page, url: "https://x.example/")
        }
        // Seconds even for the debug build on a loaded machine (the release build: 1.5 s in all).
        #expect(Date().timeIntervalSince(started) < 60, "bounded time")
    }
}
