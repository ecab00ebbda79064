import FeedSyncMarkup
import FeedSyncModel
import Foundation

// FeedSyncPage: a web page's HTML. Its public API: ArticleExtractor (this file; the article a
// reader view shows, over ArticleDOM's tree, ArticleMetadata, ArticleExtractor+Candidates and
// +Clean), SafeHTML (what of an item's or article's HTML a page may show), ReadableText (HTML
// as text for a terminal) and FeedDiscovery (the feeds a page names). Over FeedSyncMarkup;
// beside FeedSyncFeed, which it does not import. Where it sits: docs/architecture.md.

/// Finds the article in a web page. The ideas are Mozilla Readability's (the reader view of
/// Firefox), with some of trafilatura's and Miniflux's; the code is ours:
///
/// - the page's metadata first (JSON-LD, `og:`, `twitter:`, Dublin Core, `<meta>`), for the title,
///   byline, date, excerpt and site;
/// - clutter out: scripts and styles, hidden elements, elements whose class or id says they are not
///   the article (menus, share bars, comments, related links, cookie notices) unless it also says
///   they may be, and roles that are not content;
/// - each paragraph-like block scored by its text (length, commas) and passed to its ancestors
///   (halved, then a third per level), each ancestor weighted by its tag and by what its class and
///   id say; the best candidate's score less its share of link text;
/// - its siblings joined when they score near it or read as paragraphs;
/// - the result cleaned: forms, lists, tables and divs that look like navigation or galleries go,
///   headings that say they are not content go; lazy pictures made real;
/// - tried again less strictly (clutter kept, classes ignored, no conditional cleaning) when it
///   holds fewer than 500 characters.
public enum ArticleExtractor {
    /// Text a page's paragraphs must hold for it to read as an article (`readerable`): Readability's
    /// rule, each paragraph of at least 140 characters counting the square root of what it has
    /// beyond them, 20 in all.
    static let readerableScore = 20.0

    static let charThreshold = 500
    /// The most of an article's HTML kept.
    public static let maxContentBytes = 1 << 20
    static let topCandidates = 5

    struct Flags: OptionSet {
        let rawValue: Int
        static let stripUnlikely = Flags(rawValue: 1)
        static let weightClasses = Flags(rawValue: 2)
        static let cleanConditionally = Flags(rawValue: 4)
        static let all: Flags = [.stripUnlikely, .weightClasses, .cleanConditionally]
    }

    /// The article of `html` (bytes as served), relative URLs resolved against `url`; nil when the
    /// page holds none (a front page, a video with no text). With `safe`, its `safeContent` too.
    public static func extract(_ html: [UInt8], url: String, safe: Bool = false) throws(FeedError)
        -> ExtractedArticle?
    {
        // Every node lives until the extraction ends (DOMArena).
        let arena = DOMArena()
        defer { withExtendedLifetime(arena) {} }
        guard let document = try DOMNode.parse(html, into: arena) else { return nil }
        let base = URL(string: url)
        let metadata = Metadata.read(document, url: url)
        let readerable = isReaderable(document)
        prepare(document)
        // Each attempt works on a copy of the page as prepared: an attempt changes the tree.
        let pristine = copy(of: document)
        var attempts: [(content: DOMNode, length: Int)] = []
        let strictToLoose: [Flags] = [.all, [.weightClasses, .cleanConditionally], [.cleanConditionally], []]
        for (number, flags) in strictToLoose.enumerated() {
            guard let article = grab(number == 0 ? document : copy(of: pristine), flags: flags) else { continue }
            attempts.append((article, article.textLength))
            if attempts.last!.length >= charThreshold { break }
        }
        // The first long enough, else the longest.
        guard
            let chosen = attempts.last(where: { $0.length >= charThreshold })
                ?? attempts.max(by: { $0.length < $1.length }),
            chosen.length > 0 || !chosen.content.descendants(["img", "picture", "video"]).isEmpty
        else { return nil }
        let content = chosen.content
        resolve(content, base: base)
        let text = plainText(content)
        let html = content.innerHTML
        let kept = HTMLText.cutHTML(html, toBytes: maxContentBytes)
        var safeContent: String?
        if safe {
            // Made safe from the tree, unless the article is cut: then from what is kept of it.
            safeContent =
                kept.utf8.count == html.utf8.count
                ? SafeHTML.clean(content, base: url, picture: { _, url in url })
                : try SafeHTML.clean(kept, base: url, picture: { _, url in url })
        }
        return ExtractedArticle(
            title: metadata.title ?? Metadata.title(of: document), byline: metadata.byline,
            published: metadata.published,
            lang: metadata.lang, excerpt: metadata.excerpt ?? firstParagraph(content),
            siteName: metadata.siteName, content: kept, safeContent: safeContent, text: text, readerable: readerable)
    }

    static func isReaderable(_ document: DOMNode) -> Bool {
        var nodes = document.descendants(["p", "pre", "article"])
        nodes += document.descendants(["br"]).compactMap { $0.parent?.tag == "div" ? $0.parent : nil }
        var score = 0.0
        var seen = Set<ObjectIdentifier>()
        for node in nodes where seen.insert(ObjectIdentifier(node)).inserted {
            if isHidden(node) { continue }
            if matches(node, unlikely), !matches(node, maybe) { continue }
            if node.tag == "p", node.hasAncestor("li", depth: 0) { continue }
            let length = node.textSummary.trimmed
            guard length >= 140 else { continue }
            score += (Double(length) - 140).squareRoot()
            if score > readerableScore { return true }
        }
        return false
    }

    // MARK: Preparing the page

    /// Scripts, styles and comments out; `<font>` as `<span>`; runs of `<br>` as paragraphs.
    static func prepare(_ document: DOMNode) {
        for node in document.descendants(["script", "style", "link", "template"]) { node.detach() }
        for node in document.descendants(["noscript"]) {
            // A lazy picture's real copy often waits in <noscript>: it replaces the placeholder.
            unwrapNoscriptImage(node)
        }
        for node in document.descendants(["font"]) { node.tag = "span" }
        for br in document.descendants(["br"]) { replaceBreaks(br) }
    }

    static func unwrapNoscriptImage(_ noscript: DOMNode) {
        let inner = noscript.descendants(["img"])
        guard inner.count == 1, let image = inner.first else {
            noscript.detach()
            return
        }
        // The element before it holds the placeholder picture (or is it).
        if let parent = noscript.parent, let index = parent.children.firstIndex(where: { $0 === noscript }),
            index > 0
        {
            let previous = parent.children[..<index].last { !$0.isBlankText }
            if let previous, !previous.isText {
                let placeholder = previous.tag == "img" ? previous : previous.first(["img"])
                if let placeholder, previous.tag == "img" || previous.descendants(["img"]).count == 1 {
                    placeholder.replace(with: image)
                    noscript.detach()
                    return
                }
            }
        }
        noscript.replace(with: image)
    }

    /// `<br><br>`… becomes a paragraph of what follows, until the next block.
    static func replaceBreaks(_ br: DOMNode) {
        guard let parent = br.parent else { return }
        var index = parent.children.firstIndex { $0 === br }!
        var replaced = false
        // The <br>s after this one (white space between them aside) go.
        var next = index + 1
        while next < parent.children.count {
            let node = parent.children[next]
            if node.isBlankText {
                next += 1
                continue
            }
            guard node.tag == "br" else { break }
            replaced = true
            parent.children.remove(at: next)
            node.parent = nil
            for _ in index + 1..<next { parent.children.remove(at: index + 1) }
            next = index + 1
        }
        guard replaced else { return }
        let paragraph = br.arena.node("p")
        br.replace(with: paragraph)
        index = parent.children.firstIndex { $0 === paragraph }!
        while index + 1 < parent.children.count {
            let sibling = parent.children[index + 1]
            if sibling.tag == "br" {
                // A <br><br> ends the paragraph.
                let after = parent.children[(index + 2)...].first { !$0.isBlankText }
                if after?.tag == "br" { break }
            }
            if !isPhrasing(sibling) { break }
            paragraph.append(sibling)
        }
        while let last = paragraph.children.last, last.isBlankText {
            paragraph.remove(last)
        }
        if paragraph.children.isEmpty { paragraph.detach() }
        if parent.tag == "p" { parent.tag = "div" }
    }

    static let phrasingTags: Set<String> = [
        "abbr", "audio", "b", "bdo", "br", "button", "cite", "code", "data", "datalist", "dfn", "em", "embed", "i",
        "img", "input", "kbd", "label", "mark", "math", "meter", "noscript", "object", "output", "progress", "q",
        "ruby", "samp", "script", "select", "small", "span", "strong", "sub", "sup", "textarea", "time", "var", "wbr",
    ]

    static func isPhrasing(_ node: DOMNode) -> Bool {
        if node.isText || phrasingTags.contains(node.tag) { return true }
        return ["a", "del", "ins"].contains(node.tag) && node.children.allSatisfy(isPhrasing)
    }

    static func copy(of node: DOMNode) -> DOMNode {
        let copy = node.arena.node(node.tag, attributes: node.attributes, text: node.text)
        for child in node.children { copy.append(Self.copy(of: child)) }
        return copy
    }

    // MARK: What class and id say

    static let unlikely: [[UInt8]] = words(
        "-ad-", "ai2html", "banner", "breadcrumbs", "combx", "comment", "community", "cover-wrap", "disqus",
        "extra", "footer", "gdpr", "header", "legends", "menu", "related", "remark", "replies", "rss", "shoutbox",
        "sidebar", "skyscraper", "social", "sponsor", "supplemental", "ad-break", "agegate", "pagination", "pager",
        "popup", "yom-remote", "cookie",
    )
    static let maybe: [[UInt8]] = words("and", "article", "body", "column", "content", "main", "mathjax", "shadow")
    static let positive: [[UInt8]] = words(
        "article", "body", "content", "entry", "hentry", "h-entry", "main", "page", "pagination", "post", "text",
        "blog", "story",
    )
    static let negative: [[UInt8]] = words(
        "-ad-", "hidden", "banner", "combx", "comment", "com-", "contact", "footer", "gdpr", "masthead", "media",
        "meta", "outbrain", "promo", "related", "scroll", "share", "shoutbox", "sidebar", "skyscraper", "sponsor",
        "shopping", "tags", "widget",
    )
    static let shareBar = words("share", "social")
    static let unlikelyRoles: Set<String> = [
        "menu", "menubar", "complementary", "navigation", "alert", "alertdialog", "dialog",
    ]

    static func words(_ words: String...) -> [[UInt8]] { words.map { Array($0.utf8) } }

    /// Whether one of `words` is in the node's class or id.
    static func matches(_ node: DOMNode, _ words: [[UInt8]]) -> Bool {
        let hints = node.hints
        return matches(hints.class, words) || matches(hints.id, words)
    }

    static func matches(_ bytes: [UInt8], _ words: [[UInt8]]) -> Bool {
        !bytes.isEmpty && words.contains { HTMLText.find($0, in: bytes, from: 0) != nil }
    }

    static func classWeight(_ node: DOMNode, _ flags: Flags) -> Double {
        guard flags.contains(.weightClasses) else { return 0 }
        var weight = 0.0
        let hints = node.hints
        for value in [hints.class, hints.id] where !value.isEmpty {
            let hid = value.split(separator: 0x20).contains([0x68, 0x69, 0x64][...])
            if matches(value, negative) || hid { weight -= 25 }
            if matches(value, positive) { weight += 25 }
        }
        return weight
    }

    static func isHidden(_ node: DOMNode) -> Bool {
        if node["hidden"] != nil { return true }
        if node["aria-hidden"] == "true", !(node["class"] ?? "").containsUTF8("fallback-image") { return true }
        let style = (node["style"] ?? "").lowercased().filter { !$0.isWhitespace }
        return style.containsUTF8("display:none") || style.containsUTF8("visibility:hidden")
    }
}
