import FeedSyncMarkup
import FeedSyncModel
import Foundation

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

    // MARK: Finding the article

    static let scored: Set<String> = ["section", "h2", "h3", "h4", "h5", "h6", "p", "td", "pre"]
    static let blockInDiv: Set<String> = ["blockquote", "dl", "div", "img", "ol", "p", "pre", "table", "ul"]

    static func grab(_ document: DOMNode, flags: Flags) -> DOMNode? {
        guard let body = document.first(["body"]) ?? document.first(["html"]) else {
            return nil
        }
        var toScore: [DOMNode] = []
        var stack: [DOMNode] = body.children.reversed()
        var bylineSeen = false
        while let node = stack.popLast() {
            guard !node.isText else { continue }
            if isHidden(node) {
                node.detach()
                continue
            }
            if node["aria-modal"] == "true", node["role"] == "dialog" {
                node.detach()
                continue
            }
            if !bylineSeen, isByline(node) {
                bylineSeen = true
                node.detach()
                continue
            }
            if flags.contains(.stripUnlikely) {
                if matches(node, unlikely), !matches(node, maybe), !node.hasAncestor("table", depth: 0),
                    !node.hasAncestor("code", depth: 0), node.tag != "body", node.tag != "a"
                {
                    node.detach()
                    continue
                }
                if let role = node["role"]?.lowercased(), unlikelyRoles.contains(role) {
                    node.detach()
                    continue
                }
            }
            if ["div", "section", "header", "h1", "h2", "h3", "h4", "h5", "h6"].contains(node.tag),
                !node.hasText,
                !node.contains(where: { ["img", "picture", "video", "iframe", "embed", "object"].contains($0.tag) })
            {
                node.detach()
                continue
            }
            if scored.contains(node.tag) { toScore.append(node) }
            if node.tag == "div" {
                // Loose text in a div becomes paragraphs; a div holding no block becomes one.
                wrapPhrasing(node)
                if node.elements.count == 1, node.elements[0].tag == "p",
                    node.children.allSatisfy({ !$0.isText || $0.isBlankText }),
                    linkDensity(node) < 0.25
                {
                    let paragraph = node.elements[0]
                    node.replace(with: paragraph)
                    toScore.append(paragraph)
                    stack.append(contentsOf: paragraph.children.reversed())
                    continue
                }
                if !node.contains(where: { blockInDiv.contains($0.tag) }) {
                    node.tag = "p"
                    toScore.append(node)
                }
            }
            stack.append(contentsOf: node.children.reversed())
        }

        var candidates: [DOMNode] = []
        for element in toScore {
            guard element.parent != nil else { continue }
            let text = element.textSummary
            guard text.length >= 25 else { continue }
            let ancestors = element.ancestors(5)
            guard !ancestors.isEmpty else { continue }
            var score = 1.0
            score += Double(text.commas + 1)
            score += Double(min(text.length / 100, 3))
            for (level, ancestor) in ancestors.enumerated() {
                guard ancestor.tag != "#document" else { continue }
                if ancestor.score == nil {
                    ancestor.score = baseScore(ancestor) + classWeight(ancestor, flags)
                    candidates.append(ancestor)
                }
                let divider = level == 0 ? 1 : level == 1 ? 2 : Double(level) * 3
                ancestor.score! += score / divider
            }
        }
        var top: [DOMNode] = []
        for candidate in candidates {
            candidate.score = (candidate.score ?? 0) * (1 - linkDensity(candidate))
            top.append(candidate)
        }
        top.sort { ($0.score ?? 0) > ($1.score ?? 0) }
        top = Array(top.prefix(topCandidates))

        var topCandidate = top.first
        if topCandidate == nil || topCandidate!.tag == "body" {
            let holder = body.arena.node("div")
            for child in body.children { holder.append(child) }
            body.append(holder)
            holder.score = baseScore(holder)
            topCandidate = holder
        } else if let best = topCandidate {
            // When others near the best share an ancestor, that ancestor holds the article.
            let bestScore = best.score ?? 0
            let alternatives = top.dropFirst().filter { ($0.score ?? 0) / bestScore >= 0.75 }.map {
                Set($0.ancestors(100).map(ObjectIdentifier.init))
            }
            if alternatives.count >= 3 {
                var parent = best.parent
                while let current = parent, current.tag != "body" {
                    let holding = alternatives.filter { $0.contains(ObjectIdentifier(current)) }.count
                    if holding >= 3 {
                        topCandidate = current
                        break
                    }
                    parent = current.parent
                }
            }
            if topCandidate!.score == nil {
                topCandidate!.score = baseScore(topCandidate!) + classWeight(topCandidate!, flags)
            }
            // A parent that scores better than a third of the child's climb holds more of it.
            var parent = topCandidate!.parent
            var lastScore = topCandidate!.score ?? 0
            let threshold = lastScore / 3
            while let current = parent, current.tag != "body" {
                guard let parentScore = current.score else {
                    parent = current.parent
                    continue
                }
                if parentScore < threshold { break }
                if parentScore > lastScore {
                    topCandidate = current
                    break
                }
                lastScore = parentScore
                parent = current.parent
            }
            // An only child speaks for its parent.
            while let current = topCandidate, let parent = current.parent, parent.tag != "body",
                parent.elements.count == 1
            {
                topCandidate = parent
                if parent.score == nil { parent.score = baseScore(parent) + classWeight(parent, flags) }
            }
        }
        guard let winner = topCandidate else { return nil }

        // Siblings that score near it, or read as paragraphs, join it.
        let article = winner.arena.node("div")
        let winnerScore = winner.score ?? 0
        let siblingThreshold = max(10, winnerScore * 0.2)
        let siblings = winner.parent?.children ?? [winner]
        let winnerClass = winner["class"] ?? ""
        for sibling in siblings where !sibling.isText {
            var append = sibling === winner
            if !append {
                var bonus = 0.0
                if !winnerClass.isEmpty, sibling["class"] == winnerClass { bonus += winnerScore * 0.2 }
                if let score = sibling.score, score + bonus >= siblingThreshold {
                    append = true
                } else if sibling.tag == "p" {
                    let length = sibling.textLength
                    let density = linkDensity(sibling, length: length)
                    if length > 80, density < 0.25 {
                        append = true
                    } else if length < 80, length > 0, density == 0 {
                        let text = sibling.innerText
                        append = text.contains(". ") || text.hasSuffix(".")
                    }
                }
            }
            guard append else { continue }
            if ![
                "div", "article", "section", "p", "ul", "ol", "table", "blockquote", "pre", "figure", "h2", "h3",
                "h4",
            ].contains(sibling.tag), sibling !== winner {
                sibling.tag = "div"
            }
            article.append(sibling)
        }
        clean(article, flags: flags)
        return article
    }

    static func baseScore(_ node: DOMNode) -> Double {
        switch node.tag {
        case "div": 5
        case "pre", "td", "blockquote": 3
        case "address", "ol", "ul", "dl", "dd", "dt", "li", "form": -3
        case "h1", "h2", "h3", "h4", "h5", "h6", "th": -5
        default: 0
        }
    }

    /// Loose text and inline elements in a div go into paragraphs of their own.
    static func wrapPhrasing(_ div: DOMNode) {
        var index = 0
        var paragraph: DOMNode?
        while index < div.children.count {
            let child = div.children[index]
            if isPhrasing(child) {
                if paragraph == nil {
                    if child.isBlankText {
                        index += 1
                        continue
                    }
                    let made = div.arena.node("p")
                    div.children[index] = made
                    made.parent = div
                    child.parent = nil
                    made.append(child)
                    paragraph = made
                    index += 1
                } else {
                    div.children.remove(at: index)
                    child.parent = nil
                    paragraph!.append(child)
                }
            } else {
                paragraph = nil
                index += 1
            }
        }
        // A paragraph of white space only goes.
        for child in div.children where child.tag == "p" && child.elements.isEmpty && !child.hasText {
            child.detach()
        }
    }

    /// The share of `node`'s text (`length`, when the caller has it) inside links.
    static func linkDensity(_ node: DOMNode, length: Int? = nil) -> Double {
        let length = length ?? node.textLength
        guard length > 0 else { return 0 }
        var links = 0.0
        for link in node.descendants(["a"]) {
            let href = link["href"] ?? ""
            // A link within the page counts a third.
            links += Double(link.textLength) * (href.hasPrefix("#") && href.count > 1 ? 0.3 : 1)
        }
        return links / Double(length)
    }

    // MARK: Cleaning the article

    static func clean(_ article: DOMNode, flags: Flags) {
        // One walk for what depends on each node alone: what goes inside a node that goes goes with it.
        for node in article.descendants() {
            node.set("style", nil)
            switch node.tag {
            case "object" where !isVideo(node), "embed" where !isVideo(node), "iframe" where !isVideo(node),
                "footer", "link", "aside", "input", "textarea", "select", "button", "form", "fieldset", "nav":
                node.detach()
            default:
                if let role = node["role"]?.lowercased(), unlikelyRoles.contains(role) { node.detach() }
            }
        }
        // Share bars (small), by their class.
        for node in article.descendants() where node.parent != nil {
            if matches(node, shareBar), node.textLength < 500 { node.detach() }
        }
        markDataTables(article)
        fixLazyImages(article)
        if flags.contains(.cleanConditionally) {
            for tag in ["table", "ul", "div"] { cleanConditionally(article, tag: tag, flags: flags) }
        }
        // Headings that say they are not content, and the title again at the top.
        for heading in article.descendants(["h1", "h2"]) where classWeight(heading, flags) < 0 { heading.detach() }
        for node in article.descendants(["p"]) {
            let media = node.descendants(["img", "embed", "object", "iframe", "picture", "video"]).count
            if media == 0, !node.hasText { node.detach() }
        }
        // A table of one cell is its cell.
        for table in article.descendants(["table"]) where table.parent != nil {
            let rows = table.descendants(["tr"])
            if rows.count == 1, rows[0].elements.count == 1 {
                let cell = rows[0].elements[0]
                cell.tag = cell.children.allSatisfy(isPhrasing) ? "p" : "div"
                table.replace(with: cell)
            }
        }
    }

    static func isVideo(_ node: DOMNode) -> Bool {
        let source = (node["src"] ?? node["data"] ?? "").lowercased()
        return [
            "youtube", "youtube-nocookie", "player.vimeo", "dailymotion", "v.qq.com", "archive.org", "upload.wikimedia",
            "player.twitch",
        ].contains { source.contains($0) }
    }

    static func markDataTables(_ article: DOMNode) {
        for table in article.descendants(["table"]) {
            let role = table["role"]
            var data = false
            if role == "presentation" || table["datatable"] == "0" {
                data = false
            } else if table["summary"] != nil
                || !table.descendants(["caption", "thead", "tfoot", "colgroup", "th"]).isEmpty
            {
                data = true
            } else if !table.descendants(["table"]).isEmpty {
                data = false
            } else {
                let rows = table.descendants(["tr"])
                let columns = rows.map { $0.elements.count }.max() ?? 0
                data = rows.count >= 10 || columns > 4 || rows.count * columns > 10
            }
            table.set("data-table", data ? "1" : nil)
        }
    }

    /// A lazy picture's real address (`data-src`, `data-srcset`, `data-original`…) put where the
    /// browser reads it.
    static func fixLazyImages(_ article: DOMNode) {
        for image in article.descendants(["img", "picture", "figure", "source"]) {
            let src = image["src"] ?? ""
            let placeholder =
                src.isEmpty || src.hasPrefix("data:") || src.containsUTF8("placeholder")
                || src.containsUTF8("blank.") || src.containsUTF8("lazy")
            for (name, value) in image.attributes where name != "src" && name != "srcset" {
                let lowered = value.lowercased()
                guard name.hasPrefix("data-") || name == "original" else { continue }
                let looksLikePicture = [".jpg", ".jpeg", ".png", ".webp", ".gif", ".avif"].contains {
                    lowered.containsUTF8($0)
                }
                guard looksLikePicture else { continue }
                if name.containsUTF8("srcset") {
                    image.set("srcset", value)
                } else if placeholder, !value.containsUTF8(" "), !lowered.hasPrefix("data:") {
                    image.set("src", value)
                }
            }
        }
    }

    static func cleanConditionally(_ article: DOMNode, tag: String, flags: Flags) {
        for node in article.descendants([tag]).reversed() where node.parent != nil {
            if tag == "table", node["data-table"] == "1" { continue }
            if ancestorTable(node)?["data-table"] == "1" { continue }
            if node.hasAncestor("code", depth: 0) { continue }
            let isList = tag == "ul" || tag == "ol"
            let weight = classWeight(node, flags)
            if weight + (node.score ?? 0) < 0 {
                node.detach()
                continue
            }
            let text = node.textSummary
            guard text.commas < 10 else { continue }
            // What it holds, in one walk.
            var counts: [String: Int] = [:]
            var headings = 0
            var embeds = 0
            for element in node.descendants() {
                counts[element.tag, default: 0] += 1
                if headingTags.contains(element.tag) { headings += element.textLength }
                if ["object", "embed", "iframe"].contains(element.tag), !isVideo(element) { embeds += 1 }
            }
            let paragraphs = Double(counts["p", default: 0])
            let images = Double(counts["img", default: 0])
            let items = Double(counts["li", default: 0]) - 100
            let inputs = Double(counts["input", default: 0])
            let headingDensity = text.length == 0 ? 0 : Double(headings) / Double(text.length)
            let length = text.length
            let density = linkDensity(node, length: length)
            let inFigure = node.hasAncestor("figure", depth: 0)
            let remove =
                (images > 1 && paragraphs / images < 0.5 && !inFigure)
                || (!isList && items > paragraphs)
                || (inputs > (paragraphs / 3).rounded(.down))
                || (!isList && headingDensity < 0.9 && length < 25 && (images == 0 || images > 2) && !inFigure)
                || (!isList && weight < 25 && density > 0.2)
                || (weight >= 25 && density > 0.5)
                || ((embeds == 1 && length < 75) || embeds > 1)
            if remove { node.detach() }
        }
    }

    static let headingTags: Set<String> = ["h1", "h2", "h3", "h4", "h5", "h6"]

    static func ancestorTable(_ node: DOMNode) -> DOMNode? {
        var parent = node.parent
        while let current = parent {
            if current.tag == "table" { return current }
            parent = current.parent
        }
        return nil
    }

    // MARK: Byline, text, links

    static func isByline(_ node: DOMNode) -> Bool {
        let rel = node["rel"]?.lowercased()
        let itemprop = node["itemprop"]?.lowercased() ?? ""
        guard rel == "author" || itemprop.containsUTF8("author") || matches(node, bylineHints) else { return false }
        let length = node.textLength
        return length > 0 && length < 100
    }

    static let bylineHints = words("byline", "author", "dateline", "writtenby", "p-author")

    static func firstParagraph(_ article: DOMNode) -> String? {
        article.descendants(["p"]).lazy.map(\.innerText).first { !$0.isEmpty }.map {
            HTMLText.cut($0, to: HTMLText.summaryLength)
        }
    }

    static let blockTags: Set<String> = [
        "p", "div", "br", "li", "h1", "h2", "h3", "h4", "h5", "h6", "tr", "td", "th", "pre", "blockquote",
        "figcaption", "section", "article", "dd", "dt", "table", "ul", "ol", "figure", "hr",
    ]

    /// The article as text: blocks apart, runs of white space one space.
    static func plainText(_ article: DOMNode) -> String {
        var blocks: [String] = []
        var current = ""
        func flush() {
            let text = HTMLText.collapsingWhitespace(current)
            if !text.isEmpty { blocks.append(text) }
            current = ""
        }
        func walk(_ node: DOMNode) {
            if node.isText {
                current += node.text
                return
            }
            let block = blockTags.contains(node.tag)
            if block { flush() }
            if node.tag == "pre" {
                current += node.textContent
            } else {
                for child in node.children { walk(child) }
            }
            if block { flush() }
        }
        walk(article)
        flush()
        return blocks.joined(separator: "\n\n")
    }

    /// Links and pictures absolute against the page's address; `javascript:` links unwrapped.
    static func resolve(_ article: DOMNode, base: URL?) {
        for node in article.descendants() {
            for name in ["href", "src", "poster"] {
                guard let value = node[name]?.trimmed else { continue }
                if value.lowercased().hasPrefix("javascript:") {
                    if node.tag == "a" {
                        node.tag = "span"
                        node.set("href", nil)
                    } else {
                        node.set(name, nil)
                    }
                    continue
                }
                if value.hasPrefix("#") { continue }
                if let base, let absolute = URL(string: value, relativeTo: base)?.absoluteString {
                    node.set(name, absolute)
                }
            }
            if let srcset = node["srcset"], let base {
                // Split as browsers do: a comma inside a candidate's URL is the URL's.
                node.set(
                    "srcset",
                    ArticlePictures.srcset(srcset) { URL(string: $0, relativeTo: base)?.absoluteString ?? $0 })
            }
        }
    }
}
