import FeedSyncMarkup
import FeedSyncModel
import Foundation

// The article once found: cleaned of what is not the article (videos aside, tables that lay out,
// lazy pictures made plain), and its byline, text and links.

extension ArticleExtractor {
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
