import FeedSyncMarkup
import FeedSyncModel
import Foundation

// Finding the article: candidates scored by their paragraphs, their class and id, their links'
// density; the best one and its siblings.

extension ArticleExtractor {
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
}
