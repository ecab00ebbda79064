internal import CXML
import FeedSyncMarkup
import FeedSyncModel
import Foundation

// What is captured of a document as it is read: the fields, a field being captured, an entry's
// values, the namespaces feeds use.

extension XMLFeed {
    /// written as HTML).
    enum Field: Int, CaseIterable {
        case title, dcTitle, mediaTitle, link, guid, id, description, encoded, summary, content, pubDate, dcDate,
            published, image,
            updated, issued, modified, created,
            // The feed's schedule (read only at the feed's level).
            ttl, skipHour, skipDay, updatePeriod, updateFrequency,
            // An episode's length, for its enclosure (no part of an item's digest key).
            itunesDuration,
            // Who wrote it (RSS `author`, Dublin Core's `creator`, Atom's `author/name`) and its
            // categories, none part of a digest key either: an earlier feedsync did not read them.
            author, dcCreator, category

        /// Whether it is part of the digest key of an item with no id, link, title or picture.
        var keysItem: Bool {
            switch self {
            case .itunesDuration, .author, .dcCreator, .category: false
            default: true
            }
        }

        /// A field of words for people, which text encoded twice is repaired in (not an id or URL,
        /// where a repair would change what the item is).
        var isText: Bool {
            switch self {
            case .title, .dcTitle, .mediaTitle, .description, .encoded, .summary, .content: true
            default: false
            }
        }
    }

    struct Capture {
        var field: Field
        var depth: Int
        var text: [UInt8] = []
        var type: String?
        /// Atom 0.3's `mode`: `escaped`, `base64` or `xml`.
        var mode: String?
        var base: String
        /// The feed's own title or link, not an entry's field.
        var ofFeed = false
        /// XHTML (`isMarkup`): its elements are written into `text` as HTML and its text escaped,
        /// so that it is read as HTML (its paragraphs, links and pictures kept, its scripts not text).
        var markup = false

        /// Whether the elements inside are written as HTML: in XHTML, and in a field of HTML (RSS's
        /// description, content, summary) holding its markup unescaped, "naked", as feedparser and
        /// gofeed read it. Not in a title, whose text keys an item that has no id or link.
        var writesElements: Bool {
            if markup { return true }
            switch field {
            case .description, .encoded, .summary, .content: return type != "text" && type != "text/plain"
            default: return false
            }
        }

        /// Atom's `type="xhtml"` (or `application/xhtml+xml`), 0.3's `mode="xml"`.
        static func isMarkup(type: String?, mode: String?) -> Bool {
            type == "xhtml" || type == "application/xhtml+xml" || mode == "xml"
        }

        /// Appends `bytes`, escaped in XHTML; a field is cut at `FeedLimits.fieldBytes` (one title
        /// of a million entity references holds a megabyte).
        @inline(__always) mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) {
            let room = FeedLimits.fieldBytes - text.count
            guard room > 0 else { return }
            guard markup else {
                text.append(contentsOf: UnsafeBufferPointer(rebasing: bytes.prefix(room)))
                return
            }
            HTMLText.appendEscaped(bytes.prefix(room), to: &text)
            if text.count > FeedLimits.fieldBytes { text.removeLast(text.count - FeedLimits.fieldBytes) }
        }

        /// Writes an element's start tag, with the attributes whose names are plain. `base`: where
        /// an `xml:base` inside the field moved the base from the field's own (which the field is
        /// read against), its links and pictures are written absolute against it.
        mutating func appendStart(_ name: String, _ attributes: Attributes, base: String?) {
            guard text.count < FeedLimits.fieldBytes else { return }
            var tag = "<" + name
            for (name, value) in attributes.plainUnprefixed {
                let value = base.map { Self.resolved(name, value, against: $0) } ?? value
                tag += " \(name)=\"\(HTMLText.escaped(value))\""
            }
            appendTag(tag + ">")
        }

        /// An attribute's value with the URLs it holds made absolute against `base`.
        static func resolved(_ attribute: String, _ value: String, against base: String) -> String {
            switch attribute.lowercased() {
            case "href", "src", "poster": return DocumentURL.resolve(value, against: base) ?? value
            case "srcset": return ArticlePictures.srcset(value) { DocumentURL.resolve($0, against: base) ?? $0 }
            default: return value
            }
        }

        /// Writes an element's end tag (none for a void element, which HTML has no end for).
        mutating func appendEnd(_ name: String) {
            if text.count < FeedLimits.fieldBytes, !HTMLNames.voidTags.contains(name.lowercased()) {
                appendTag("</\(name)>")
            }
        }

        private mutating func appendTag(_ tag: String) {
            text.append(contentsOf: tag.utf8.prefix(max(0, FeedLimits.fieldBytes - text.count)))
        }
    }

    /// A field's text, its Atom `type` (and 0.3 `mode`) and the base URL in effect where it was.
    struct Captured {
        var text: [UInt8]
        var type: String?
        var mode: String?
        var base: String

        /// Atom's `type` says whether a field is text or markup (XHTML is HTML by now); RSS text is
        /// treated as HTML, as it is in practice.
        var isText: Bool { type == "text" || type == "text/plain" }

        /// The field as one line of plain text; with `limit`, only enough of markup for a cut to it.
        func plain(limit: Int? = nil) -> String {
            isText
                ? HTMLText.collapsingWhitespace(String(decoding: text, as: UTF8.self))
                : HTMLText.plain(text, limit: limit)
        }
    }

    struct Entry {
        /// By `Field.rawValue`: a dozen slots, no hashing per field.
        var fields = [Captured?](repeating: nil, count: Field.allCases.count)
        subscript(field: Field) -> Captured? {
            get { fields[field.rawValue] }
            set { fields[field.rawValue] = newValue }
        }
        var guidIsPermaLink = true
        /// RSS 1.0's `rdf:about`, the item's URI.
        var about: String?
        var alternate: String?
        /// The first image enclosure.
        var enclosure: String?
        /// The first enclosure of any type (a podcast's episode), for an item keyed by its link,
        /// and whether it is sound or video.
        var mediaFile: String?
        var mediaIsAudioOrVideo = false
        var mediaContent: String?
        /// The first `media:content` of any type, for an item that has nothing else.
        var media: String?
        var mediaThumbnail: String?
        var itunesImage: String?
        /// Its files other than pictures, in order, as found (`FeedEnclosure.merged` evens them).
        var enclosures: [FeedEnclosure] = []
        /// An RSS item's `<image url="…">` (its text form is the field `image`).
        var image: String?
        /// Its categories in order: RSS's text, Atom's `label` or else `term`.
        var categories: [String] = []
    }

    enum Namespace {
        static let atom = "http://www.w3.org/2005/Atom"
        static let atom03 = "http://purl.org/atom/ns#"
        static let rss1 = "http://purl.org/rss/1.0/"
        static let rss090 = "http://my.netscape.com/rdf/simple/0.9/"
        static let rdf = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
        static let content = "http://purl.org/rss/1.0/modules/content/"
        static let dc = "http://purl.org/dc/elements/1.1/"
        static let media = "http://search.yahoo.com/mrss/"
        static let itunes = "http://www.itunes.com/dtds/podcast-1.0.dtd"
        static let xhtml = "http://www.w3.org/1999/xhtml"
        static let sy = "http://purl.org/rss/1.0/modules/syndication/"
    }
}
