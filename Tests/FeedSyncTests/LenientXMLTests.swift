import FeedSyncModel
import Foundation
import Testing

@testable import FeedSyncFeed
@testable import FeedSyncMarkup
@testable import FeedSyncPage

/// What browsers and feedparser forgive in XML, read the same way (issue 17): references,
/// encodings and damage. Each case is a minimal document of our own.
@Suite struct LenientXMLTests {
    func titles(_ body: Data, headers: [String: String] = [:]) throws -> [String] {
        try decode(body, url: "https://l.example/feed", headers: headers).page.items.map(\.title)
    }

    func titles(_ xml: String, headers: [String: String] = [:]) throws -> [String] {
        try titles(Data(xml.utf8), headers: headers)
    }

    func rss(_ items: String, prolog: String = "<?xml version=\"1.0\"?>") -> String {
        "\(prolog)<rss version=\"2.0\"><channel><title>t</title>\(items)</channel></rss>"
    }

    @Test func htmlNamedReferencesAreReadWhereverTheyAre() throws {
        let page = try decode(
            Data(
                rss(
                    """
                    <item><title>Caf&eacute;&nbsp;&amp;&hellip; &CounterClockwiseContourIntegral; &fjlig;</title>
                      <link>https://l.example/?a=1&amp;b=&eacute;</link>
                      <enclosure type="image/png" url="https://l.example/p.png?w=1&amp;h=&eacute;&amp;amp;x"/></item>
                    """
                ).utf8), url: "https://l.example/feed"
        ).page
        let item = try #require(page.items.first)
        #expect(item.title == "Café &… ∳ fj", "a title's white space, no-break spaces too, is collapsed")
        #expect(item.link == "https://l.example/?a=1&b=%C3%A9")
        #expect(item.pictureURL == "https://l.example/p.png?w=1&h=%C3%A9&amp;x", "an attribute is decoded exactly once")
    }

    @Test func aDeclaredNameIsTheDocumentsOwnAndUnknownOnesStayAsWritten() throws {
        let prolog = "<?xml version=\"1.0\"?><!DOCTYPE rss [<!ENTITY copy \"our notice\">]>"
        #expect(
            try titles(rss("<item><title>&copy; &unknownname; AT&T &#38; a&b</title></item>", prolog: prolog))
                == ["our notice &unknownname; AT&T & a&b"])
    }

    @Test func numericReferencesAsBrowsersReadThem() throws {
        #expect(
            try titles(rss("<item><title>it&#146;s &#150; &#X41;&#x42; &#8;&#0;</title></item>")) == [
                "it’s – AB \u{FFFD}"
            ])
    }

    @Test func controlCharactersAreDroppedNotFatal() throws {
        #expect(try titles(rss("<item><title>a\u{1}b\u{1B}c\u{7F}d</title></item>")) == ["abc\u{7F}d"])
    }

    @Test func aLessThanSignThatOpensNoTagIsText() throws {
        #expect(try titles(rss("<item><title>1 < 2 <3</title></item>")) == ["1 < 2 <3"])
    }

    @Test func byteOrderMarksAndUTF16And32() throws {
        let document = rss(
            "<item><title>Grüße ✓</title></item>", prolog: "<?xml version=\"1.0\" encoding=\"UTF-16\"?>")
        for encoding: String.Encoding in [.utf16LittleEndian, .utf16BigEndian, .utf32LittleEndian, .utf32BigEndian] {
            let bom: [UInt8] =
                switch encoding {
                case .utf16LittleEndian: [0xFF, 0xFE]
                case .utf16BigEndian: [0xFE, 0xFF]
                case .utf32LittleEndian: [0xFF, 0xFE, 0, 0]
                default: [0, 0, 0xFE, 0xFF]
                }
            let body = Data(bom) + document.data(using: encoding)!
            #expect(try titles(body) == ["Grüße ✓"], "\(encoding)")
        }
        #expect(try titles(Data([0xEF, 0xBB, 0xBF]) + Data(rss("<item><title>é</title></item>").utf8)) == ["é"])
    }

    @Test func theHTTPCharsetComesBeforeTheDeclaration() throws {
        let bytes = Data(
            rss(
                "<item><title>caf\u{E9} \u{2019}</title></item>",
                prolog: "<?xml version=\"1.0\" encoding=\"utf-8\"?>"
            ).data(using: .windowsCP1252)!)
        #expect(try titles(bytes, headers: ["content-type": "text/xml; charset=windows-1252"]) == ["café ’"])
    }

    @Test func withNoDeclarationUTF8IfItIsElseWindows1252() throws {
        let cp1252 = Data(
            rss("<item><title>don\u{2019}t caf\u{E9}</title></item>", prolog: "").data(using: .windowsCP1252)!)
        #expect(try titles(cp1252) == ["don’t café"])
        #expect(try titles(rss("<item><title>don’t café</title></item>", prolog: "")) == ["don’t café"])
        // ISO-8859-1 declared is read as windows-1252, as browsers read it.
        let latin1 = Data(
            rss(
                "<item><title>don\u{2019}t</title></item>",
                prolog: "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?>"
            ).data(using: .windowsCP1252)!)
        #expect(try titles(latin1) == ["don’t"])
    }

    @Test func anEncodingNoOneKnowsCountsAsNone() throws {
        #expect(
            try titles(rss("<item><title>é</title></item>", prolog: "<?xml version=\"1.0\" encoding=\"bogus\"?>")) == [
                "é"
            ])
    }

    @Test func whiteSpaceOrACommentBeforeTheDeclaration() throws {
        #expect(try titles("\n  " + rss("<item><title>w</title></item>")) == ["w"])
        #expect(try titles("<!-- generated -->\n" + rss("<item><title>c</title></item>")) == ["c"])
    }

    @Test func damageIsReadPastAndSaidWhere() throws {
        let page = try decode(
            Data(
                rss(
                    """
                    <item><title>before</title><link>https://l.example/1</item>
                    <item><title>after</title><p>unclosed</item>
                    <item><title>last</title></item>
                    """
                ).utf8), url: "https://l.example/feed"
        ).page
        #expect(page.items.map(\.title) == ["before", "after", "last"])
        #expect(page.malformed?.hasPrefix("line 1, column") == true, "\(String(describing: page.malformed))")
        // Nothing readable at all: refused, naming where.
        let error = #expect(throws: FeedError.self) { try titles("<rss><channel><item><title>cut") }
        #expect(error?.reason.contains("not well-formed") == true)
        // Damage around no item at all is an empty feed.
        #expect(try titles("<rss><channel><title>empty</chan") == [])
    }

    @Test func referencesAreRewrittenAcrossChunkBoundaries() throws {
        // XMLFeed hands libxml2 256 KB at a time: put references and markup openings across the cut.
        for shift in 0..<12 {
            let padding = String(repeating: "x", count: (256 << 10) - 60 + shift)
            let document = rss(
                "<item><title>\(padding)</title></item>"
                    + "<item><title>&eacute;&amp;<![CDATA[&raw;]]>&hellip;</title></item>"
            )
            #expect(try titles(document).last == "é&&raw;…", "shift \(shift)")
        }
    }

    @Test func whatAReviewFound() throws {
        // A control character before the declaration (once a trap).
        let xml = ["content-type": "application/rss+xml"]
        #expect(
            try titles(
                " \u{1}\n<?xml version=\"1.0\"?>" + rss("<item><title>c</title></item>", prolog: ""), headers: xml)
                == ["c"])
        // A quote in a comment inside the DTD does not swallow the document.
        let dtd = "<?xml version=\"1.0\"?><!DOCTYPE rss [<!-- Netscape's entities --><!ENTITY mine \"own\">]>"
        #expect(try titles(rss("<item><title>&mine; &eacute;&hellip;</title></item>", prolog: dtd)) == ["own é…"])
        // References to no character: U+FFFD; `&#;` is text.
        #expect(
            try titles(rss("<item><title>a&#99999999999;b&#x110000;c&#;</title></item>")) == ["a\u{FFFD}b\u{FFFD}c&#;"])
        // A code unit that is no character in UTF-16 is skipped whole: the rest stays aligned.
        var utf16 =
            Data([0xFF, 0xFE]) + rss("<item><title>x</title></item><item><title>after</title></item>", prolog: "")
            .data(using: .utf16LittleEndian)!
        let lone = try #require(utf16.range(of: "x".data(using: .utf16LittleEndian)!))
        utf16.replaceSubrange(lone, with: Data([0x00, 0xDC]))  // a lone low surrogate where x was
        #expect(try titles(utf16).last == "after")
    }
}
