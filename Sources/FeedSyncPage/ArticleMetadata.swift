import FeedSyncMarkup
import FeedSyncModel
import Foundation

extension ArticleExtractor {
    /// What a page says of its article: JSON-LD first, then `<meta>` (Dublin Core, Open Graph,
    /// Twitter, plain names), each value made plain text and bounded.
    struct Metadata {
        var title: String?
        var byline: String?
        var published: String?
        var lang: String?
        var excerpt: String?
        var siteName: String?

        static let articleTypes: Set<String> = [
            "Article", "AdvertiserContentArticle", "NewsArticle", "AnalysisNewsArticle", "AskPublicNewsArticle",
            "BackgroundNewsArticle", "OpinionNewsArticle", "ReportageNewsArticle", "ReviewNewsArticle", "Report",
            "SatiricalArticle", "ScholarlyArticle", "MedicalScholarlyArticle", "SocialMediaPosting", "BlogPosting",
            "LiveBlogPosting", "DiscussionForumPosting", "TechArticle", "APIReference",
        ]

        /// The `property` values read (Open Graph and its kin) and the `name`s (`.` and `-` as `:`).
        static let propertyNames: Set<String> = Set(
            ["article", "dc", "dcterm", "og", "twitter"].flatMap { prefix in
                ["author", "creator", "description", "published_time", "title", "site_name"].map { "\(prefix):\($0)" }
            })
        static let names: Set<String> = Set(
            ["", "dc:", "dcterm:", "og:", "twitter:", "weibo:article:", "weibo:webpage:"].flatMap { prefix in
                ["author", "creator", "description", "title", "site_name"].map { prefix + $0 }
            })

        static func read(_ document: DOMNode, url: String) -> Metadata {
            var metadata = Metadata()
            var values: [String: String] = [:]
            for meta in document.descendants(["meta"]) {
                guard let content = meta["content"].map(HTMLText.decodedText), !content.isEmpty else { continue }
                if let property = meta["property"]?.lowercased() {
                    for name in property.split(separator: " ") where Self.propertyNames.contains(String(name)) {
                        values[String(name)] = content
                    }
                }
                if let name = meta["name"].map(Self.metaName), Self.names.contains(name) {
                    values[name] = content
                }
            }
            let jsonLD = Self.jsonLD(document)
            metadata.title =
                jsonLD.title ?? values["dc:title"] ?? values["dcterm:title"] ?? values["og:title"]
                ?? values["weibo:article:title"] ?? values["weibo:webpage:title"] ?? values["title"]
                ?? values["twitter:title"]
            let articleAuthor = values["article:author"].flatMap { $0.contains("://") ? nil : $0 }
            metadata.byline =
                jsonLD.byline ?? values["dc:creator"] ?? values["dcterm:creator"] ?? values["author"] ?? articleAuthor
            metadata.excerpt =
                jsonLD.excerpt ?? values["dc:description"] ?? values["dcterm:description"] ?? values["og:description"]
                ?? values["weibo:article:description"] ?? values["weibo:webpage:description"]
                ?? values["description"] ?? values["twitter:description"]
            metadata.siteName = jsonLD.siteName ?? values["og:site_name"]
            let published = jsonLD.published ?? values["article:published_time"]
            metadata.published = published.flatMap(FeedDate.normalise)
            metadata.lang = document.first(["html"])?["lang"].map(HTMLText.decodedText).flatMap {
                $0.isEmpty ? nil : $0
            }
            metadata.title = metadata.title.map(bounded)
            metadata.byline = metadata.byline.map(bounded)
            metadata.siteName = metadata.siteName.map(bounded)
            metadata.excerpt = metadata.excerpt.map { HTMLText.cut($0, to: HTMLText.summaryLength * 4) }
            return metadata
        }

        static func bounded(_ text: String) -> String { FeedLimits.boundedTitle(text) }

        /// A `<meta name>` as `names` holds it: lower case, trimmed, `.` and `-` as `:`.
        static func metaName(_ name: String) -> String {
            String(name.trimmed.lowercased().map { $0 == "." || $0 == "-" ? ":" : $0 })
        }

        /// What the page's JSON-LD says of an article, when it describes one.
        static func jsonLD(_ document: DOMNode) -> Metadata {
            var found = Metadata()
            for script in document.descendants(["script"]) where script["type"]?.lowercased() == "application/ld+json" {
                var text = script.textContent.trimmed
                if text.hasPrefix("<![CDATA[") { text.removeFirst(9) }
                if text.hasSuffix("]]>") { text.removeLast(3) }
                guard text.utf8.count < 1 << 20, let value = try? JSONValue.parse(Data(text.utf8)) else { continue }
                var objects: [JSONValue] = []
                switch value {
                case .array(let list): objects = list
                case .object(let object):
                    if case .array(let graph)? = object["@graph"] { objects = graph } else { objects = [value] }
                default: continue
                }
                guard
                    let article = objects.first(where: { object in
                        switch object["@type"] {
                        case .string(let type)?: articleTypes.contains(type)
                        case .array(let types)?: types.contains { $0.text.map(articleTypes.contains) == true }
                        default: false
                        }
                    })
                else { continue }
                let name = article["name"]?.text.map(HTMLText.decodedText)
                let headline = article["headline"]?.text.map(HTMLText.decodedText)
                found.title = headline ?? name
                if let name, let headline, name != headline {
                    // Both given: the one nearer the page's own title.
                    let pageTitle = ArticleExtractor.Metadata.title(of: document) ?? ""
                    found.title = similarity(name, pageTitle) > similarity(headline, pageTitle) ? name : headline
                }
                switch article["author"] {
                case .object?: found.byline = article["author"]?["name"]?.text.map(HTMLText.decodedText)
                case .array(let authors)?:
                    let names = authors.compactMap { $0["name"]?.text.map(HTMLText.decodedText) }
                    if !names.isEmpty { found.byline = names.joined(separator: ", ") }
                case .string(let text)?: found.byline = HTMLText.decodedText(text)
                default: break
                }
                found.excerpt = article["description"]?.text.map(HTMLText.decodedText)
                found.siteName = article["publisher"]?["name"]?.text.map(HTMLText.decodedText)
                found.published = article["datePublished"]?.text
                return found
            }
            return found
        }

        static func similarity(_ a: String, _ b: String) -> Double {
            let first = Set(a.lowercased().split(whereSeparator: { !$0.isLetter && !$0.isNumber }))
            let second = b.lowercased().split(whereSeparator: { !$0.isLetter && !$0.isNumber })
            guard !second.isEmpty else { return 0 }
            let unmatched = second.filter { !first.contains($0) }
            return 1 - Double(unmatched.joined(separator: " ").count) / Double(second.joined(separator: " ").count)
        }

        /// Where a separator (one of `marks` between spaces) stands in `text`, first to last; two
        /// may share a space.
        static func separatorRanges(in text: String, of marks: Set<Character>) -> [Range<String.Index>] {
            var found: [Range<String.Index>] = []
            var index = text.startIndex
            while index < text.endIndex {
                let mark = text.index(after: index)
                if text[index] == " ", mark < text.endIndex, marks.contains(text[mark]) {
                    let space = text.index(after: mark)
                    if space < text.endIndex, text[space] == " " { found.append(index..<text.index(after: space)) }
                }
                index = mark
            }
            return found
        }

        /// What separates a title's parts (between spaces), and those of them that make a path
        /// (`News / World`): made once, not at every page.
        static let separators: Set<Character> = ["|", "-", "–", "—", "\\", "/", ">", "»"]
        static let pathSeparators: Set<Character> = ["\\", "/", ">", "»"]

        /// The page's `<title>`, less the site's name where a separator sets it apart.
        static func title(of document: DOMNode) -> String? {
            let original = HTMLText.collapsingWhitespace(document.first(["title"])?.textContent ?? "")
            var title = original
            var hierarchical = false
            func words(_ text: String) -> Int { text.split(whereSeparator: \.isWhitespace).count }
            let separators = separatorRanges(in: original, of: Self.separators)
            if let first = separators.first, let last = separators.last {
                hierarchical = separators.contains {
                    Self.pathSeparators.contains(original[original.index(after: $0.lowerBound)])
                }
                // Everything before the last separator; when that leaves too few words, after the first.
                title = String(original[..<last.lowerBound])
                if words(title) < 3 { title = String(original[first.upperBound...]) }
            } else if title.contains(": ") {
                let headings = document.descendants(["h1", "h2"]).map { HTMLText.collapsingWhitespace($0.textContent) }
                if !headings.contains(title.trimmed) {
                    if let last = original.lastIndex(of: ":") {
                        title = String(original[original.index(after: last)...])
                    }
                    if words(title) < 3, let first = original.firstIndex(of: ":") {
                        title = String(original[original.index(after: first)...])
                    } else if let first = original.firstIndex(of: ":"), words(String(original[..<first])) > 5 {
                        title = original
                    }
                }
            } else if title.count > 150 || title.count < 15 {
                let headings = document.descendants(["h1"])
                if headings.count == 1 { title = HTMLText.collapsingWhitespace(headings[0].textContent) }
            }
            title = HTMLText.collapsingWhitespace(title)
            let count = words(title)
            let originalWithout = original.filter { !Self.separators.contains($0) }
            if count <= 4, !hierarchical || count != words(originalWithout) - 1 {
                title = original
            }
            return title.isEmpty ? nil : bounded(title)
        }
    }
}
