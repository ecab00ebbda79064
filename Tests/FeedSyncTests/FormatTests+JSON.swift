import FeedSyncModel
import Foundation
import Testing

@testable import FeedSyncFeed
@testable import FeedSyncMarkup
@testable import FeedSyncPage

/// A JSON document too long for memory is read from its file with its items handed over in parts
/// as they are read; what it gives must be what reading it whole gives.
@Suite struct JSONInPartsTests {
    /// `body` read from a file in parts of `batch`: the format, the page with the parts' items
    /// (each key once, as the paging machine keeps them), and the parts' sizes.
    func decodeInParts(
        _ body: Data, url: String = "https://x.example/feed.json", format: FeedFormat? = nil,
        headers: [String: String] = [:], batch: Int = 2
    ) throws -> (format: FeedFormat, page: FeedPage, parts: [Int]) {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("feedsync-json-\(UUID().uuidString)")
            .path
        try body.write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        var items: [FeedItem] = []
        var parts: [Int] = []
        var (found, page) = try FeedDocument.decode(
            fileAt: path, format: format, context: DocumentContext(url: url, headers: headers, page: 1), batch: batch
        ) { part in
            items += part
            parts.append(part.count)
        }
        #expect(page.items.isEmpty, "the page returned carries no items")
        page.items = FeedDocument.uniqueKeys(items)
        return (found, page, parts)
    }

    @Test(arguments: ["jsonfeed-awkward.json", "wordpress-posts.json"])
    func aDocumentReadInPartsGivesWhatItGivesReadWhole(name: String) throws {
        let url = "https://wp.example/wp-json/wp/v2/posts?page=1"
        let headers = ["x-wp-total": "250", "x-wp-totalpages": "3"]
        let whole = try decode(fixture(name), url: url, headers: headers)
        let read = try decodeInParts(fixture(name), url: url, headers: headers)
        #expect(read.format == whole.format)
        #expect(read.page == whole.page)
        #expect(read.parts.count >= 2 && read.parts.allSatisfy { $0 <= 2 })
    }

    @Test func theSeedFormatsMembersAfterItsItemsAreRead() throws {
        // No `version` before the items: the list is read twice, once to find the rest of the root.
        let body = Data(
            #"""
            {"items": [{"id": "a", "title": "A"}, 7, {"id": "b"}, {"id": "c"}, {"id": "d"}, {"id": "e"}], \#
            "page": 3, "total": 90, "has_more": true}
            """#.utf8)
        let read = try decodeInParts(body)
        #expect(read.format == .pagedJSON)
        #expect(read.page.items.map(\.key) == ["a", "b", "c", "d", "e"] && read.page.items[0].title == "A")
        #expect(read.page.page == 3 && read.page.total == 90 && read.page.hasMore == true && read.page.skipped == 1)
        #expect(read.parts == [2, 2, 1])
        #expect(try decodeInParts(Data(#"{"news": [{"id": "a"}, {"id": "b"}, {"id": "c"}]}"#.utf8)).parts == [2, 1])
    }

    @Test func aJSONFeedWhoseVersionComesAfterItsItemsIsReadAsAJSONFeed() throws {
        let body = Data(
            #"""
            {"items": [{"id": "1", "title": "T", "attachments": \#
            [{"mime_type": "image/png", "url": "https://x.example/a.png"}]}],
             "version": "https://jsonfeed.org/version/1.1", "next_url": "https://x.example/2.json"}
            """#.utf8)
        let read = try decodeInParts(body)
        #expect(read.format == .jsonFeed)
        #expect(read.page.items.first?.pictureURL == "https://x.example/a.png", "a JSON Feed's attachment")
        #expect(read.page.next == "https://x.example/2.json" && read.page.hasMore == true)
    }

    @Test func aVersionGivenAgainAfterTheItemsDoesNotChangeTheFormatTheyWereReadAs() throws {
        let body = Data(
            #"""
            {"version": "2", "items": [{"id": "1", "picUrl": "https://x.example/1.png"}], \#
            "version": "https://jsonfeed.org/version/1.1"}
            """#.utf8)
        let read = try decodeInParts(body)
        #expect(read.format == .pagedJSON)
        #expect(read.page.items.first?.pictureURL == "https://x.example/1.png", "the seed format's picUrl")
    }

    @Test func aBrokenOrMisshapenDocumentIsRefusedBeforeAnyItemIsHandedOver() throws {
        var handed = 0
        func refusal(_ text: String, format: FeedFormat? = nil) -> String? {
            let path = FileManager.default.temporaryDirectory.appendingPathComponent(
                "feedsync-json-\(UUID().uuidString)"
            ).path
            #expect(FileManager.default.createFile(atPath: path, contents: Data(text.utf8)))
            defer { try? FileManager.default.removeItem(atPath: path) }
            let error = #expect(throws: FeedError.self) {
                try FeedDocument.decode(
                    fileAt: path, format: format, context: DocumentContext(url: "https://x/", headers: [:], page: 1),
                    batch: 1
                ) { handed += $0.count }
            }
            return error?.reason
        }
        #expect(
            refusal(#"{"items": [{"id": "a"}, {"id": "b"}, {"id": "c"}"#)?.contains(
                "not valid JSON (unexpected end at byte 48") == true)
        #expect(
            refusal(#"{"items": [{"id": "a"}, {"id": "b"}]} x"#)?.contains("unexpected text after the document") == true
        )
        #expect(refusal(#"{"items": [{"id": "a"} {"id": "b"}]}"#)?.contains("expected ',' or ']' at byte 23") == true)
        #expect(refusal(#"{"page": 1 "items": []}"#)?.contains("expected ',' or '}' at byte 11") == true)
        #expect(
            refusal(#"{"items": [{"id": "a"}, {"id": "b"}]}"#, format: .wordpress)?.contains("not an array of posts")
                == true)
        #expect(refusal(#"[{"id": "a"}, {"id": "b"}]"#, format: .jsonFeed)?.contains("is not an object") == true)
        #expect(refusal("")?.contains("neither JSON nor XML") == true)
        #expect(
            refusal(#"{"items": [{"id": "a"}, {"id": "b"}], "items": null}"#)?.contains("a second \"items\" member")
                == true)
        #expect(handed == 0)
    }
}

@Suite struct JSONReaderTests {
    func parse(_ text: String) throws -> JSONValue { try JSONValue.parse(Data(text.utf8)) }

    @Test func readsEveryKindOfValue() throws {
        let value = try parse(
            #"""
            {"s": "a\"b\\c\/d\n\t\u00e9\ud83d\ude00 é", "n": -12.5e2, "z": 0, "i": 42, "t": true, "f": false,
             "null": null, "a": [1, [], {}], "o": {"k": "v"}, "lone": "\ud800x", "dup": 1, "dup": 2}
            """#)
        #expect(value["dup"]?.integer == 2, "a name given twice means its last value")
        #expect(value["missing"] == nil && value["o"]?["s"] == nil)
        #expect(value["s"]?.text == "a\"b\\c/d\n\té😀 é")
        guard case .number(let n)? = value["n"], case .number(0)? = value["z"] else {
            Issue.record("numbers")
            return
        }
        #expect(n == -1250)
        #expect(value["i"]?.integer == 42 && value["i"]?.text == "42")
        #expect(value["t"]?.boolean == true && value["f"]?.boolean == false)
        guard case .null? = value["null"], case .array(let array)? = value["a"] else {
            Issue.record("null, array")
            return
        }
        #expect(array.count == 3)
        #expect(value["o"]?["k"]?.text == "v")
        #expect(value["lone"]?.text == "\u{FFFD}x", "a lone surrogate is not a character")
        #expect(try parse("\u{FEFF} [ ] ").boolean == nil, "a byte order mark and whitespace around are fine")
    }

    @Test(arguments: [
        "", "{", "[1,]", "{\"a\" 1}", "{\"a\":1,}", "01", "-", "1.", ".5", "1e", "NaN", "tru", "\"a", "\"\\x\"",
        "\"\\u12\"", "\"a\u{01}b\"", "[1] 2", "{'a': 1}",
        String(repeating: "[", count: 600) + String(repeating: "]", count: 600),
    ])
    func refusesWhatIsNotJSON(_ text: String) {
        #expect(throws: FeedError.self, "\(text.prefix(20))") { try parse(text) }
    }
}
