import Foundation

extension FeedDocument {
    /// JSON or XML by the first byte, then the format by what the document says of itself.
    static func decodeAnyFormat(
        _ body: Data, format: FeedFormat?, context: DocumentContext
    ) throws(FeedError) -> (FeedFormat, FeedPage) {
        let contentType = context.headers["content-type"]?.lowercased() ?? ""
        switch family(of: body) ?? family(ofContentType: contentType) {
        case .xml?:
            if format == .pagedJSON || format == .jsonFeed || format == .wordpress {
                throw FeedError("the document is XML, not \(format!.rawValue) as chosen with --format")
            }
            let start = String(decoding: body.prefix(512), as: UTF8.self).lowercased()
            if start.contains("<!doctype html") || start.contains("<html") {
                throw FeedError("the document is a web page, not a feed; use the address of the site's RSS or Atom feed")
            }
            return try XMLFeed.decode(body, base: context.url)
        case .json?:
            if format == .rss || format == .atom {
                throw FeedError("the document is JSON, not \(format!.rawValue) as chosen with --format")
            }
            let root = try JSONValue.parse(body)
            let found = format ?? jsonFormat(of: root, headers: context.headers)
            switch found {
            case .jsonFeed: return (found, try JSONFeed.page(from: root, base: context.url))
            case .wordpress: return (found, try WordPress.page(from: root, context: context))
            default: return (.pagedJSON, try PagedJSON.page(from: root, base: context.url))
            }
        case nil:
            let preview = String(decoding: body.prefix(40), as: UTF8.self)
            throw FeedError("the document is neither JSON nor XML (it starts with \(String(reflecting: preview)))")
        }
    }

    enum Family { case json, xml }

    /// By the first byte that is not a byte-order mark or whitespace.
    static func family(of body: Data) -> Family? {
        var bytes = body.prefix(1024)[...]
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
        switch bytes.first(where: { $0 != 0x20 && $0 != 0x09 && $0 != 0x0A && $0 != 0x0D }) {
        case UInt8(ascii: "<"): return .xml
        case UInt8(ascii: "{"), UInt8(ascii: "["): return .json
        default: return nil
        }
    }

    static func family(ofContentType type: String) -> Family? {
        if type.contains("xml") { return .xml }
        if type.contains("json") { return .json }
        return nil
    }

    /// JSON Feed names itself in `version`; WordPress answers with an array of posts; anything
    /// else is read as the seed format, which says what is wrong if it is not that either.
    static func jsonFormat(of root: JSONValue, headers: [String: String]) -> FeedFormat {
        if case .object(let object) = root, object["version"]?.text?.contains("jsonfeed.org/version/") == true {
            return .jsonFeed
        }
        if case .array = root { return .wordpress }
        if headers["x-wp-total"] != nil || headers["x-wp-totalpages"] != nil { return .wordpress }
        return .pagedJSON
    }

    /// Items in order, each key once: the first occurrence wins.
    static func uniqueKeys(_ items: [FeedItem]) -> [FeedItem] {
        var seen = Set<String>(minimumCapacity: items.count)
        return items.filter { seen.insert($0.key).inserted }
    }
}

/// URLs as feeds write them: relative, padded with whitespace, sometimes with spaces inside.
enum DocumentURL {
    /// `reference` made absolute against `base`; `nil` when it is empty.
    static func resolve(_ reference: String?, against base: String?) -> String? {
        guard let reference = reference?.trimmingWhitespace, !reference.isEmpty else { return nil }
        // Already absolute: the common case, and no reason to let URL re-encode it.
        if reference.hasPrefix("http://") || reference.hasPrefix("https://") { return reference }
        guard let base, let baseURL = URL(string: base) else { return reference }
        let escaped = reference.replacingOccurrences(of: " ", with: "%20")
        return URL(string: escaped, relativeTo: baseURL)?.absoluteString ?? reference
    }
}

/// The `rel="next"` target of an HTTP `Link` header (RFC 8288).
enum LinkHeader {
    static func next(_ header: String?, base: String) -> String? {
        guard let header else { return nil }
        // `<url>; rel="next", <url>; rel="prev"`: URLs are in angle brackets, so commas inside
        // them do not split links.
        var rest = Substring(header)
        while let open = rest.firstIndex(of: "<"), let close = rest[open...].firstIndex(of: ">") {
            let target = rest[rest.index(after: open)..<close]
            let parameters = rest[rest.index(after: close)...].prefix { $0 != "<" }
            rest = rest[close...].dropFirst()
            let relations = parameters.split(separator: ";").compactMap { parameter -> [Substring]? in
                let pair = parameter.split(separator: "=", maxSplits: 1)
                guard pair.count == 2, pair[0].trimmingWhitespace.lowercased() == "rel" else { return nil }
                return pair[1].trimmingWhitespace.trimmingCharacters(in: CharacterSet(charactersIn: "\"")).lowercased()
                    .split(separator: " ")
            }.joined()
            if relations.contains("next") { return DocumentURL.resolve(String(target), against: base) }
        }
        return nil
    }
}
