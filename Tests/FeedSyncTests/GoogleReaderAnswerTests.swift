import FeedSyncModel
import Foundation
import Testing

@testable import FeedSyncFeed
@testable import FeedSyncMarkup

/// A Google Reader API server's answers, in the shapes ../shared/greader records (FreshRSS) and
/// documents (Miniflux, The Old Reader, BazQux), are checked as a feed's: ids in a form every
/// server takes back, strings bounded, links only http(s), anything else one sentence.
@Suite struct GoogleReaderAnswerTests {
    static let long = "tag:google.com,2005:reader/item/"

    @Test func everyServersIdFormBecomesTheLongFormAndNothingElseIsAnId() {
        // FreshRSS's decimal (stream/items/ids) and its hex are one id.
        #expect(GoogleReaderAnswer.itemID("1796162308513958") == Self.long + "00066199a05ba0a6")
        #expect(GoogleReaderAnswer.itemID(Self.long + "00066199a05ba0a6") == Self.long + "00066199a05ba0a6")
        #expect(GoogleReaderAnswer.itemID(Self.long + "00066199A05BA0A6") == Self.long + "00066199a05ba0a6")
        // Miniflux's short decimal ids, padded; The Old Reader's 24-digit ObjectId, kept whole.
        #expect(GoogleReaderAnswer.itemID("42") == Self.long + "000000000000002a")
        #expect(GoogleReaderAnswer.itemID("5f8e3a1b2c4d5e6f7a8b9c0d") == Self.long + "5f8e3a1b2c4d5e6f7a8b9c0d")
        // An ObjectId whose 24 hex digits are all below a is no decimal number.
        #expect(GoogleReaderAnswer.itemID("507011223344556677889900") == Self.long + "507011223344556677889900")
        for bad in [
            "", "-1", "18446744073709551616", Self.long, Self.long + "xyz", "12 34", "tag:other/1",
            String(repeating: "a", count: 33), "１２",
        ] {
            #expect(GoogleReaderAnswer.itemID(bad) == nil, "\(bad)")
        }
    }

    @Test func theLogInAndTokenAnswersGiveTheirTokenOrOneSentence() throws {
        let login = Data("SID=ana/0123456789abcdef0123456789abcdef01234567\nLSID=null\nAuth=ana/0123\n".utf8)
        #expect(try GoogleReaderAnswer.auth(login) == "ana/0123")
        #expect(throws: RemoteRefusal.self) { try GoogleReaderAnswer.auth(Data("Error=BadAuthentication\n".utf8)) }
        #expect(throws: RemoteRefusal.self) { try GoogleReaderAnswer.auth(Data("Auth=a b\u{1B}[31m\n".utf8)) }
        #expect(try GoogleReaderAnswer.actionToken(Data("0123456789abcdefZZZZ\n".utf8)) == "0123456789abcdefZZZZ")
        #expect(throws: RemoteRefusal.self) { try GoogleReaderAnswer.actionToken(Data("<html>oops</html> x".utf8)) }
    }

    @Test func idPagesFollowTheirContinuationAndAnEmptyStreamIsEmpty() throws {
        let page = try GoogleReaderAnswer.itemIDs(
            Data(#"{"itemRefs": [{"id": "1796162308513961"}, {"id": "nope"}, {"id": 7}], "continuation": "2"}"#.utf8))
        #expect(page.elements == [Self.long + "00066199a05ba0a9", Self.long + "0000000000000007"])
        #expect(page.skipped == 1 && page.continuation == "2")
        let last = try GoogleReaderAnswer.itemIDs(Data(#"{"itemRefs": []}"#.utf8))
        #expect(last.elements.isEmpty && last.continuation == nil)
        #expect(try GoogleReaderAnswer.itemIDs(Data("{}".utf8)).elements.isEmpty)
        // Miniflux's answer to a call it does not route, and a page that is no JSON: one sentence.
        for body in ["[]", "<html>Not Implemented!</html>", #"{"itemRefs": "x"}"#] {
            #expect(throws: RemoteRefusal.self, "\(body)") { try GoogleReaderAnswer.itemIDs(Data(body.utf8)) }
        }
        let many =
            "{\"itemRefs\": [" + Array(repeating: "{\"id\": \"1\"}", count: 100_001).joined(separator: ",") + "]}"
        #expect(throws: RemoteRefusal.self) { try GoogleReaderAnswer.itemIDs(Data(many.utf8)) }
    }

    @Test func itemsKeepTitleLinkDateAuthorContentStateAndPictureEachChecked() throws {
        let body = """
            {"id": "user/-/state/com.google/reading-list", "items": [
              {"id": "tag:google.com,2005:reader/item/00066199a05bded3", "published": 1767225600,
               "title": "Tea &amp; \\u001b[31mcake", "canonical": [{"href": "http://example.com/tea"}],
               "categories": ["user/-/state/com.google/reading-list", "user/-/label/Tech & Café",
                              "user/-/state/com.google/read", "user/1005/state/com.google/starred"],
               "origin": {"streamId": "feed/3", "title": "Tech Bits"},
               "summary": {"content": "<p>Hot.</p><img src=\\"http://example.com/in.png\\">"},
               "enclosure": [{"href": "http://example.com/ep.mp3", "type": "audio/mpeg", "length": "1000"},
                             {"href": "http://example.com/pic.jpg", "type": "image/jpeg"}],
               "author": "ana@example.org\\n(Ana Núñez)"},
              {"id": "1796162308513961", "alternate": [{"href": "javascript:alert(1)"}],
               "origin": {"streamId": "feed/http://example.com/feed"}, "title": "Plain",
               "content": {"content": "<p>Whole.</p>"}, "summary": {"content": "short"}},
              {"id": "bad id", "origin": {"streamId": "feed/1"}, "title": "no id"},
              {"id": "1", "title": "no feed"},
              {"id": "2", "origin": {"streamId": "label/x"}, "title": "not a feed stream"}
            ], "continuation": "1796162308513961"}
            """
        let page = try GoogleReaderAnswer.items(Data(body.utf8))
        #expect(page.skipped == 3 && page.continuation == "1796162308513961")
        let tea = try #require(page.elements.first)
        #expect(tea.id == Self.long + "00066199a05bded3" && tea.item.key == tea.id && tea.feedID == "feed/3")
        #expect(!tea.unread && tea.starred && tea.feedTitle == "Tech Bits")
        // Entities decoded; control characters stay text, escaped wherever a title is shown.
        #expect(tea.item.title == "Tea & \u{1B}[31mcake", "\(tea.item.title)")
        #expect(tea.item.link == "http://example.com/tea")
        #expect(tea.item.published == "2026-01-01T00:00:00Z")
        #expect(tea.item.author == "ana@example.org (Ana Núñez)")
        #expect(tea.item.pictureURL == "http://example.com/pic.jpg", "an image enclosure before the content's")
        #expect(tea.item.enclosures.map(\.url) == ["http://example.com/ep.mp3"])
        let plain = try #require(page.elements.last)
        #expect(plain.unread && !plain.starred && plain.feedID == "feed/http://example.com/feed")
        #expect(plain.item.link == nil, "a javascript: link is no link")
        #expect(plain.item.content == "<p>Whole.</p>", "content before summary")
    }

    @Test func subscriptionsAndLabelsAreReadWithTheirNamesRawAndBounded() throws {
        let subscriptions = try GoogleReaderAnswer.subscriptions(
            Data(
                """
                {"subscriptions": [
                  {"id": "feed/3", "title": "Tech Bits (mine)", "url": "http://127.0.0.1:8398/tech.xml",
                   "categories": [{"id": "user/-/label/Tech & Café", "label": "Tech & Café"}]},
                  {"id": "feed/1", "title": "\(String(repeating: "long ", count: 400))", "url": "file:///etc/passwd",
                   "categories": []},
                  {"id": "user/-/label/x", "title": "not a feed"}
                ]}
                """.utf8))
        #expect(subscriptions.count == 2)
        #expect(subscriptions[0].streamID == "feed/3" && subscriptions[0].labels == ["Tech & Café"])
        #expect(subscriptions[0].url == "http://127.0.0.1:8398/tech.xml")
        #expect(subscriptions[1].url == nil && subscriptions[1].title.count <= FeedLimits.titleCharacters)
        let labels = try GoogleReaderAnswer.labels(
            Data(
                #"{"tags": [{"id": "user/-/state/com.google/starred"}, {"id": "user/-/label/Tech & Café", "type": "folder"}, {"id": "user/7/label/Uncategorized"}]}"#
                    .utf8))
        #expect(labels == ["Tech & Café", "Uncategorized"])
        #expect(throws: RemoteRefusal.self) { try GoogleReaderAnswer.subscriptions(Data("Not Implemented!".utf8)) }
    }
}
