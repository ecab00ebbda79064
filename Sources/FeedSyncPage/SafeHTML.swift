internal import CXML
import FeedSyncMarkup
import FeedSyncModel
import Foundation

/// An item's content made safe to show in a page: read with libxml2's HTML parser (as a browser
/// reads broken HTML), then written again from an allow-list of elements and attributes. Nothing
/// that runs, styles, embeds or submits survives (script, style, iframe, object, form, event
/// handlers, `style`, `class`), no URL but an http(s) or mailto link, and no remote resource: a
/// picture's `src` is what `picture` makes of its absolute URL (a local address of a cached copy),
/// else the picture becomes a placeholder. Links open in a new tab with no referrer. The article
/// extractor's tree is written by the same rules without being written out and read again.
public enum SafeHTML {
    /// Elements kept, with their text.
    static let kept: Set<String> = [
        "p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "pre", "code", "em", "strong", "b", "i",
        "u", "s", "sub", "sup", "small", "ul", "ol", "li", "dl", "dt", "dd", "a", "img", "figure", "figcaption",
        "table", "thead", "tbody", "tfoot", "tr", "th", "td", "caption", "span", "div", "abbr", "cite", "q",
        "mark", "del", "ins", "time", "kbd", "samp", "var", "article", "section", "aside", "header", "footer",
    ]
    /// Elements dropped with everything inside them; any other element is unwrapped (its
    /// children kept: libxml2's HTML 4 parser puts what follows a void element it does not know,
    /// such as `<embed>`, inside it).
    static let dropped: Set<String> = [
        "script", "style", "iframe", "frameset", "object", "applet", "form", "button", "select", "textarea",
        "noscript", "template", "svg", "math", "head", "title", "audio", "video", "canvas", "map", "dialog", "portal",
    ]
    static let voidElements: Set<String> = ["br", "hr", "img"]

    /// The safe HTML of `html`, relative URLs resolved against `base`. A picture (an `<img>`, or a
    /// `<picture>` and its sources: `ArticlePictures.choose`) shows what `picture` gives for its
    /// reference as written and its absolute URL, else a placeholder with its alt text.
    public static func clean(_ html: String, base: String?, picture: (_ source: String, _ url: String?) -> String?)
        throws(FeedError) -> String
    {
        let xml = try LibXML2.shared.get()
        let bytes = Array(html.utf8)
        guard !bytes.isEmpty, bytes.count < Int(Int32.max) else { return "" }
        // HTML_PARSE_RECOVER | NOERROR | NOWARNING | NONET, as FeedDiscovery; the fragment is read
        // as a document's body.
        let options: Int32 = 1 | 32 | 64 | 2048
        guard
            let document = bytes.withUnsafeBufferPointer({ buffer in
                buffer.withMemoryRebound(to: CChar.self) {
                    xml.readHTML($0.baseAddress, Int32($0.count), nil, "UTF-8", options)
                }
            })
        else { return "" }
        defer { xml.freeDocument(document) }
        return withoutActuallyEscaping(picture) { picture in
            var writer = Writer<XMLTree.Element>(base: base, picture: picture, capacity: bytes.count)
            XMLTree.walk(document) {
                writer.enter($0)
            } text: {
                writer.out += HTMLText.escaped(String(cString: $0))
            } leave: {
                writer.leave($0)
            }
            return writer.out
        }
    }

    /// The safe HTML of what is below `node` (the article extractor's tree), by the same rules as
    /// `clean(_:base:picture:)`, without writing the tree out and reading it again.
    static func clean(_ node: DOMNode, base: String?, picture: (_ source: String, _ url: String?) -> String?)
        -> String
    {
        withoutActuallyEscaping(picture) { picture in
            var writer = Writer<DOMNode>(base: base, picture: picture, capacity: 0)
            node.walk {
                writer.enter($0)
            } text: {
                writer.out += HTMLText.escaped($0)
            } leave: {
                writer.leave($0)
            }
            return writer.out
        }
    }

    /// Writes the allowed part of a tree as it is walked in document order.
    struct Writer<Element: SafeHTMLElement> {
        let baseURL: URL?
        let picture: (_ source: String, _ url: String?) -> String?
        var out = ""
        /// `<picture>` elements open: their `<img>` was shown with them.
        var pictures = 0

        init(base: String?, picture: @escaping (_ source: String, _ url: String?) -> String?, capacity: Int) {
            baseURL = base.flatMap { URL(string: $0) }
            self.picture = picture
            out.reserveCapacity(capacity)
        }

        /// Writes `element`'s start; false when its children are not to be walked.
        mutating func enter(_ element: Element) -> Bool {
            let name = Self.name(element)
            if dropped.contains(name) { return false }
            if name == "picture" {
                let (sources, img) = element.pictureParts
                image(ArticlePictures.choose(sources: sources.map(candidate), img: img.map(candidate)), img)
                pictures += 1
                return true
            }
            guard kept.contains(name) else { return true }
            switch name {
            case "a":
                out += "<a"
                if let href = value(element, "href").flatMap({
                    absolute($0, baseURL, schemes: ["http", "https", "mailto"])
                }) {
                    out += " href=\"\(HTMLText.escaped(href))\" target=\"_blank\" rel=\"noopener noreferrer\""
                }
            case "img":
                if pictures == 0 { image(ArticlePictures.choose(sources: [], img: candidate(element)), element) }
                return false
            case "td", "th":
                out += "<\(name)" + numbers(["colspan", "rowspan"], of: element, digits: 3)
            default:
                out += "<\(name)"
            }
            titleAndAlt(of: element)
            out += ">"
            return !voidElements.contains(name)
        }

        mutating func leave(_ element: Element) {
            let name = Self.name(element)
            if name == "picture" { pictures -= 1 }
            if kept.contains(name), !voidElements.contains(name) { out += "</\(name)>" }
        }

        /// The name the rules go by: what follows the last colon. libxml2 names `<x:y:script>`
        /// `y:script` (what follows the first), and that element written out and read again
        /// `script`: by its last part the extractor's tree and the stored article read alike.
        static func name(_ element: Element) -> String {
            let name = element.name
            guard let colon = name.utf8.lastIndex(of: UInt8(ascii: ":")) else { return name }
            return String(name[name.index(after: colon)...])
        }

        /// A picture's `<img>`, or its placeholder.
        mutating func image(_ chosen: String?, _ img: Element?) {
            if let chosen, let local = picture(chosen, absolute(chosen, baseURL, schemes: ["http", "https"])) {
                out += "<img src=\"\(HTMLText.escaped(local))\" loading=\"lazy\""
                if let img {
                    out += numbers(["width", "height"], of: img, digits: 5)
                    titleAndAlt(of: img)
                }
                out += ">"
            } else {
                out += "<span class=\"missing-picture\">"
                out += HTMLText.escaped(img.flatMap { value($0, "alt") }.map { "[\($0)]" } ?? "[picture]")
                out += "</span>"
            }
        }

        mutating func titleAndAlt(of element: Element) {
            for attribute in ["title", "alt"] {
                if let value = value(element, attribute) { out += " \(attribute)=\"\(HTMLText.escaped(value))\"" }
            }
        }

        /// The attribute named so; nil when absent or longer than `FeedLimits.urlBytes`.
        func value(_ element: Element, _ name: String) -> String? {
            element[name].flatMap { $0.utf8.count <= FeedLimits.urlBytes ? $0 : nil }
        }

        /// What `ArticlePictures.choose` reads of an `<img>` or `<source>`.
        func candidate(_ element: Element) -> ArticlePictures.Candidate {
            ArticlePictures.Candidate(
                src: value(element, "src"), srcset: value(element, "srcset"), type: value(element, "type"),
                width: value(element, "width"), height: value(element, "height"))
        }

        /// ` width="640"`: those of `attributes` the element has as a number of at most `digits` digits.
        func numbers(_ attributes: [String], of element: Element, digits: Int) -> String {
            attributes.compactMap { attribute in
                value(element, attribute).flatMap { value in
                    value.utf8.count <= digits && FeedLimits.isDigits(value) ? " \(attribute)=\"\(value)\"" : nil
                }
            }.joined()
        }
    }

    /// Plain text as HTML.
    public static func text(_ text: String) -> String { HTMLText.escaped(text) }

    /// `url` resolved against `base` when it is one of `schemes`, else nil.
    static func absolute(_ url: String, _ base: URL?, schemes: Set<String>) -> String? {
        let trimmed = url.trimmed
        guard let resolved = URL(string: trimmed, relativeTo: base)?.absoluteURL,
            let scheme = resolved.scheme?.lowercased(), schemes.contains(scheme)
        else { return nil }
        return resolved.absoluteString
    }
}

/// An element of a tree `SafeHTML` writes from: libxml2's, or the article extractor's.
protocol SafeHTMLElement {
    /// The name in lower case.
    var name: String { get }
    /// The attribute named so (given in lower case), or nil.
    subscript(_ name: String) -> String? { get }
    /// The `<source>`s and the first `<img>` below this element, in document order (libxml2's
    /// HTML 4 parser, which knows no `<source>`, nests what follows one inside it).
    var pictureParts: (sources: [Self], img: Self?) { get }
}

extension XMLTree.Element: SafeHTMLElement {
    var pictureParts: (sources: [Self], img: Self?) {
        var sources: [Self] = []
        var img: Self?
        var stack = [node.pointee.children].compactMap { $0 }
        while let node = stack.popLast() {
            if let next = node.pointee.next { stack.append(next) }
            guard node.pointee.type == XML_ELEMENT_NODE else { continue }
            let element = Self(node: node)
            switch element.name {
            case "source": sources.append(element)
            case "img" where img == nil: img = element
            default: break
            }
            if let child = node.pointee.children { stack.append(child) }
        }
        return (sources, img)
    }
}

extension DOMNode: SafeHTMLElement {
    var name: String { tag }

    var pictureParts: (sources: [DOMNode], img: DOMNode?) {
        let found = descendants(["source", "img"])
        return (found.filter { $0.tag == "source" }, found.first { $0.tag == "img" })
    }
}
