import FeedSyncModel

// The pictures an item's content shows, so a reader offline sees the article whole: one per
// `<img>` or `<picture>`, the candidate a browser would take for a column about 800 px wide. The
// parser finds them with a byte scan as it reads an item; the reading page's `SafeHTML` chooses
// from the same attributes of libxml2's tree by the same rules (`choose`), and the two meet on
// the reference as written (`ContentPicture.source`).

public enum ArticlePictures {
    /// At most this many pictures of one item are kept.
    public static let perItem = 24
    /// The width of the reading column a `srcset` is chosen for.
    package static let columnWidth = 800

    /// The attributes of one `<img>` or `<source>` that the choice reads.
    public struct Candidate: Sendable {
        public var src: String?
        public var srcset: String?
        public var type: String?
        public var width: String?
        public var height: String?

        public init(
            src: String? = nil, srcset: String? = nil, type: String? = nil, width: String? = nil,
            height: String? = nil
        ) {
            self.src = src
            self.srcset = srcset
            self.type = type
            self.width = width
            self.height = height
        }
    }

    /// The reference a `<picture>` (its `<source>`s, then its `<img>`) or a lone `<img>` stands
    /// for; nil for a tracking pixel (a declared width or height of 2 or less) or when nothing
    /// usable is named. A source of a type no reader here decodes is passed over.
    public static func choose(sources: [Candidate], img: Candidate?) -> String? {
        if let img, isPixel(img.width) || isPixel(img.height) { return nil }
        for source in sources where source.type.map(isReadable) ?? true {
            if let chosen = source.srcset.flatMap(best) ?? source.src?.trimmed.nilIfEmpty { return chosen }
        }
        guard let img else { return nil }
        return img.srcset.flatMap(best) ?? img.src?.trimmed.nilIfEmpty
    }

    /// The pictures `html` shows, in order, each URL once, at most `perItem`: relative references
    /// resolved against `base`, anything but http(s) (a `data:` URI, `cid:`) left out.
    public static func find(in html: [UInt8], base: String?) -> [ContentPicture] {
        var found: [ContentPicture] = []
        var seen: Set<String> = []
        func add(_ source: String?) {
            guard found.count < perItem, let source,
                let url = FeedLimits.webURL(DocumentURL.resolve(source, against: base)),
                source.utf8.count <= FeedLimits.urlBytes, seen.insert(url).inserted
            else { return }
            found.append(ContentPicture(source: source, url: url))
        }
        var sources: [Candidate]?  // inside a <picture>: its sources so far
        var pictureImage: Candidate?
        var index = 0
        while found.count < perItem, let open = html[index...].firstIndex(of: UInt8(ascii: "<")) {
            if html[open...].starts(with: "<!--".utf8) {
                index = HTMLText.find(Array("-->".utf8), in: html, from: open + 4).map { $0 + 3 } ?? html.count
                continue
            }
            guard let close = html[open...].firstIndex(of: UInt8(ascii: ">")) else { break }
            index = close + 1
            let closing = html[open + 1] == UInt8(ascii: "/")
            let nameStart = open + (closing ? 2 : 1)
            let name = html[nameStart..<close].prefix { HTMLText.isASCIILetter($0) }.map { $0 | 0x20 }
            let inside = html[(nameStart + name.count)..<close]
            switch (String(decoding: name, as: UTF8.self), closing) {
            case ("picture", false):
                sources = []
                pictureImage = nil
            case ("picture", true):
                if let picked = sources { add(choose(sources: picked, img: pictureImage)) }
                sources = nil
            case ("source", false):
                sources?.append(candidate(inside))
            case ("img", false):
                if sources != nil {
                    pictureImage = candidate(inside)
                } else {
                    add(choose(sources: [], img: candidate(inside)))
                }
            default: break
            }
        }
        // A <picture> left open at the end of the content.
        if let picked = sources { add(choose(sources: picked, img: pictureImage)) }
        return found
    }

    /// The attributes of a tag's inside, entities decoded.
    package static func candidate(_ tag: ArraySlice<UInt8>) -> Candidate {
        func value(_ name: String) -> String? {
            HTMLText.attribute(Array(name.utf8), in: tag).map {
                HTMLText.decodeEntities(String(decoding: $0, as: UTF8.self))
            }
        }
        return Candidate(
            src: value("src"), srcset: value("srcset"), type: value("type"), width: value("width"),
            height: value("height"))
    }

    /// A declared dimension of 2 pixels or less: a tracking pixel, not a picture.
    package static func isPixel(_ dimension: String?) -> Bool {
        guard let digits = dimension?.trimmed.prefix(while: { $0.isASCII && $0.isNumber }), !digits.isEmpty,
            digits.count < 6,
            let value = Int(digits)
        else { return false }
        return value <= 2
    }

    /// Whether a `<source type>` is one the picture checks accept (ImageKind in FeedSyncImages).
    package static func isReadable(_ type: String) -> Bool {
        let type = type.trimmed.lowercased()
        return type.isEmpty
            || [
                "image/png", "image/jpeg", "image/jpg", "image/gif", "image/webp", "image/avif", "image/heic",
                "image/heif", "image/bmp",
            ].contains(type)
    }

    /// The candidate of a `srcset` for the column: with widths (`640w`), the narrowest at least
    /// `columnWidth` wide, else the widest; with densities (`2x`, or none: 1x), the lowest at
    /// least 1x, else the highest. Nil when it names nothing.
    package static func best(_ srcset: String) -> String? {
        var widths: [(url: String, width: Int)] = []
        var densities: [(url: String, density: Double)] = []
        for (url, descriptor) in candidates(srcset) {
            let descriptor = descriptor.isEmpty ? "1x" : descriptor.lowercased()
            if descriptor.hasSuffix("w"), let width = Int(descriptor.dropLast()), width > 0 {
                widths.append((url, width))
            } else if descriptor.hasSuffix("x"), let density = Double(descriptor.dropLast()), density > 0 {
                densities.append((url, density))
            }
        }
        if !widths.isEmpty {
            return
                (widths.filter { $0.width >= columnWidth }.min { $0.width < $1.width }
                ?? widths.max { $0.width < $1.width })?.url
        }
        return
            (densities.filter { $0.density >= 1 }.min { $0.density < $1.density }
            ?? densities.max { $0.density < $1.density })?.url
    }

    /// A `srcset`'s candidates as HTML reads them: a URL runs to whitespace (commas inside it
    /// are its own; trailing ones end the candidate), its descriptor to the next comma.
    package static func candidates(_ srcset: String) -> [(url: String, descriptor: String)] {
        var found: [(url: String, descriptor: String)] = []
        var rest = srcset[...]
        while true {
            rest = rest.drop { $0.isWhitespace || $0 == "," }
            guard !rest.isEmpty else { return found }
            var url = rest.prefix { !$0.isWhitespace }
            rest = rest[url.endIndex...]
            if url.last == "," {
                while url.last == "," { url = url.dropLast() }
                found.append((String(url), ""))
                continue
            }
            let descriptor = rest.prefix { $0 != "," }
            rest = rest[descriptor.endIndex...]
            found.append((String(url), String(descriptor).trimmed))
        }
    }

    /// `srcset` with each candidate's URL made what `resolve` makes of it, its descriptor kept.
    package static func srcset(_ srcset: String, resolving resolve: (String) -> String) -> String {
        candidates(srcset).map { url, descriptor in
            descriptor.isEmpty ? resolve(url) : resolve(url) + " " + descriptor
        }.joined(separator: ", ")
    }
}
