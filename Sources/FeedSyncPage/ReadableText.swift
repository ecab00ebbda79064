import FeedSyncMarkup
import FeedSyncModel
import Foundation

/// An item's HTML content as text to read in a terminal: blocks (block elements end one, `<br>`
/// breaks a line inside one), each a paragraph, a heading, a list item with its bullet or number,
/// or code (`<pre>`, its lines kept), inside the quotes and lists around it; and links as
/// numbered references, `text [1]`, listed after the text. Scripts, styles and comments are
/// dropped; pictures become `[image: alt]`. Lenient like `HTMLText.plain`: a stray `<` is text,
/// an unclosed tag ends the content.
public enum ReadableText {
    public typealias Block = TextBlock
    public typealias Rendered = RenderedText

    public static func render(_ html: String, base: String?) -> Rendered {
        var reader = Reader(bytes: Array(html.utf8), base: base)
        reader.run()
        reader.endParagraph()
        var rendered = Rendered(blocks: reader.blocks, links: reader.links)
        rendered.pictures = reader.pictures
        return rendered
    }

    private static let blocks: Set<String> = [
        "p", "div", "section", "article", "header", "footer", "aside", "nav", "main", "blockquote", "figure",
        "figcaption", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "dl", "dt", "dd", "table", "tr", "hr",
        "pre", "address", "details", "summary",
    ]

    private struct Reader {
        let bytes: [UInt8]
        let base: String?
        var blocks: [Block] = []
        var links: [String] = []
        var heading: Int?
        var quoted = 0
        /// The open lists: whether each is ordered, its items so far, and its number.
        var lists: [(ordered: Bool, items: Int, number: Int)] = []
        var listsOpened = 0
        /// The marker of the list item whose first block is being read.
        var marker: String?
        var current: [UInt8] = []
        var pendingSpace = false
        var preformatted = 0
        /// The reference number of each open `<a>`, nil for one without a usable href.
        var openLinks: [Int?] = []
        /// The pictures, each in the block being read when it came; inside a `<picture>`, its
        /// sources so far.
        var pictures: [RenderedText.Picture] = []
        var sources: [ArticlePictures.Candidate]?

        init(bytes: [UInt8], base: String?) {
            self.bytes = bytes
            self.base = base
        }

        mutating func run() {
            var index = 0
            while index < bytes.count {
                let byte = bytes[index]
                if byte == UInt8(ascii: "<"), index + 3 < bytes.count, bytes[index + 1] == UInt8(ascii: "!"),
                    bytes[index + 2] == UInt8(ascii: "-"), bytes[index + 3] == UInt8(ascii: "-")
                {
                    index = HTMLText.find(Array("-->".utf8), in: bytes, from: index + 4).map { $0 + 3 } ?? bytes.count
                } else if byte == UInt8(ascii: "<"), index + 1 < bytes.count, HTMLText.opensTag(bytes[index + 1]) {
                    guard let close = bytes[index...].firstIndex(of: UInt8(ascii: ">")) else { return }
                    index = tag(bytes[(index + 1)..<close], after: close + 1)
                } else if byte == UInt8(ascii: "&"), let (decoded, end) = HTMLText.entity(in: bytes, at: index) {
                    for byte in decoded { text(byte) }
                    index = end
                } else {
                    text(byte)
                    index += 1
                }
            }
        }

        /// Handles the tag between `<` and `>`; returns where reading goes on.
        mutating func tag(_ inside: ArraySlice<UInt8>, after end: Int) -> Int {
            let closing = inside.first == UInt8(ascii: "/")
            let name = String(
                decoding: inside.drop { $0 == UInt8(ascii: "/") }.prefix { HTMLText.isASCIILetter($0) || isDigit($0) }
                    .map { $0 | 0x20 }, as: UTF8.self)
            switch name {
            case "script" where !closing, "style" where !closing, "head" where !closing, "title" where !closing:
                let stop = HTMLText.find(Array("</\(name)".utf8), in: bytes, from: end)
                return stop.flatMap { bytes[$0...].firstIndex(of: UInt8(ascii: ">")) }.map { $0 + 1 } ?? bytes.count
            case "br":
                current.append(UInt8(ascii: "\n"))
                pendingSpace = false
            case "li":
                endParagraph()
                if !closing {
                    if lists.isEmpty {  // an item outside a list
                        listsOpened += 1
                        lists.append((false, 0, listsOpened))
                    }
                    lists[lists.count - 1].items += 1
                    let list = lists[lists.count - 1]
                    marker = list.ordered ? "\(list.items). " : "• "
                }
            case "ul", "ol", "dl":
                endParagraph()
                if closing {
                    _ = lists.popLast()
                } else {
                    listsOpened += 1
                    lists.append((name == "ol", 0, listsOpened))
                }
            case "blockquote":
                endParagraph()
                quoted = max(0, quoted + (closing ? -1 : 1))
            case "h1", "h2", "h3", "h4", "h5", "h6":
                endParagraph()
                heading = closing ? nil : Int(String(name.dropFirst()))
            case "a" where !closing:
                let href = HTMLText.attribute(Array("href".utf8), in: inside).map {
                    HTMLText.decodeEntities(String(decoding: $0, as: UTF8.self))
                }
                openLinks.append(reference(href))
            case "a":
                if let number = openLinks.popLast() ?? nil {
                    pendingSpace = !current.isEmpty
                    append(Array("[\(number)]".utf8))
                }
            case "picture":
                sources = closing ? nil : []
            case "source" where !closing:
                let source = ArticlePictures.candidate(attributes(inside))
                sources?.append(source)
            case "img":
                // Chosen by the rule the parser's scan chose the stored picture by.
                if let source = ArticlePictures.choose(
                    sources: sources ?? [], img: ArticlePictures.candidate(attributes(inside)))
                {
                    pictures.append(RenderedText.Picture(block: blocks.count, source: source))
                }
                let alt = HTMLText.attribute(Array("alt".utf8), in: inside).map {
                    HTMLText.collapsingWhitespace(HTMLText.decodeEntities(String(decoding: $0, as: UTF8.self)))
                }
                pendingSpace = pendingSpace || !current.isEmpty
                append(Array((alt?.isEmpty == false ? "[image: \(alt!)]" : "[image]").utf8))
            case "pre":
                endParagraph()
                preformatted += closing ? (preformatted > 0 ? -1 : 0) : 1
            case _ where ReadableText.blocks.contains(name):
                endParagraph()
            default:
                break
            }
            return end
        }

        /// The reference number of `href`, made absolute against the base; nil when it is not a
        /// link to follow.
        mutating func reference(_ href: String?) -> Int? {
            guard let href = href?.trimmed, !href.isEmpty,
                !href.hasPrefix("#")
            else { return nil }
            let absolute = href.lowercased().hasPrefix("mailto:") ? href : DocumentURL.resolve(href, against: base)
            guard let absolute, FeedLimits.webURL(absolute) != nil || absolute.lowercased().hasPrefix("mailto:")
            else { return nil }
            if let known = links.firstIndex(of: absolute) { return known + 1 }
            links.append(absolute)
            return links.count
        }

        mutating func text(_ byte: UInt8) {
            let isSpace = byte == 0x20 || (0x09...0x0D).contains(byte)
            if preformatted > 0 {
                if byte != UInt8(ascii: "\r") { current.append(byte) }
            } else if isSpace {
                pendingSpace = !current.isEmpty && current.last != UInt8(ascii: "\n")
            } else {
                append([byte])
            }
        }

        mutating func append(_ text: [UInt8]) {
            if pendingSpace { current.append(UInt8(ascii: " ")) }
            pendingSpace = false
            current += text
        }

        mutating func endParagraph() {
            let paragraph = String(decoding: current, as: UTF8.self)
                .split(separator: "\n", omittingEmptySubsequences: false)
                .map { preformatted > 0 ? String($0) : $0.trimmingCharacters(in: .whitespaces) }
                .joined(separator: "\n").trimmingCharacters(in: .newlines)
            if !paragraph.isEmpty {
                let kind: Block.Kind =
                    preformatted > 0
                    ? .code : heading.map(Block.Kind.heading) ?? marker.map(Block.Kind.item) ?? .paragraph
                blocks.append(Block(kind, paragraph, quoted: quoted, lists: lists.count, list: lists.last?.number ?? 0))
                marker = nil
            }
            current = []
            pendingSpace = false
        }

        func isDigit(_ byte: UInt8) -> Bool { (0x30...0x39).contains(byte) }

        /// A tag's inside after its name: its attributes.
        func attributes(_ inside: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
            inside.drop { $0 == UInt8(ascii: "/") }.drop { HTMLText.isASCIILetter($0) || isDigit($0) }
        }
    }
}
