internal import CXML
import Foundation

/// A web page as a tree the article extractor can change: libxml2's HTML parser reads it (as a
/// browser reads broken HTML), and its elements and text are copied into these nodes, bounded.
final class DOMNode {
    /// The element's name in lower case; "#text" for text.
    var tag: String
    var attributes: [(name: String, value: String)]
    var children: [DOMNode] = []
    weak var parent: DOMNode?
    /// A text node's text.
    var text: String
    /// The extractor's score, once it has one.
    var score: Double?

    init(tag: String, attributes: [(name: String, value: String)] = [], text: String = "") {
        self.tag = tag
        self.attributes = attributes
        self.text = text
    }

    var isText: Bool { tag == "#text" }

    subscript(_ name: String) -> String? {
        attributes.first { $0.name == name }?.value
    }

    func set(_ name: String, _ value: String?) {
        attributes.removeAll { $0.name == name }
        if let value { attributes.append((name, value)) }
    }

    var elements: [DOMNode] { children.filter { !$0.isText } }

    func append(_ child: DOMNode) {
        child.parent?.remove(child)
        child.parent = self
        children.append(child)
    }

    func remove(_ child: DOMNode) {
        if let index = children.firstIndex(where: { $0 === child }) { children.remove(at: index) }
        child.parent = nil
    }

    /// Takes this node out of its parent.
    func detach() { parent?.remove(self) }

    /// Puts `node` where this node is.
    func replace(with node: DOMNode) {
        guard let parent, let index = parent.children.firstIndex(where: { $0 === self }) else { return }
        node.parent?.remove(node)
        parent.children[index] = node
        node.parent = parent
        self.parent = nil
    }

    /// Every element below this one, in document order.
    func descendants(_ tags: Set<String>? = nil) -> [DOMNode] {
        var found: [DOMNode] = []
        var stack = Array(children.reversed())
        while let node = stack.popLast() {
            guard !node.isText else { continue }
            if tags == nil || tags!.contains(node.tag) { found.append(node) }
            stack.append(contentsOf: node.children.reversed())
        }
        return found
    }

    /// Whether an element below this one is `where`'s: stops at the first.
    func contains(where matching: (DOMNode) -> Bool) -> Bool {
        var stack = Array(children.reversed())
        while let node = stack.popLast() {
            guard !node.isText else { continue }
            if matching(node) { return true }
            stack.append(contentsOf: node.children.reversed())
        }
        return false
    }

    /// Whether any text below this one is more than white space: stops at the first.
    var hasText: Bool {
        var stack = [self]
        while let node = stack.popLast() {
            if node.isText {
                if node.text.utf8.contains(where: { $0 > 0x20 }) { return true }
            } else {
                stack.append(contentsOf: node.children)
            }
        }
        return false
    }

    /// The text of this node and everything below it.
    var textContent: String {
        if isText { return text }
        var out = ""
        var stack = Array(children.reversed())
        while let node = stack.popLast() {
            if node.isText { out += node.text } else { stack.append(contentsOf: node.children.reversed()) }
        }
        return out
    }

    /// The text with runs of white space made one space, trimmed.
    var innerText: String { DOMNode.collapse(textContent) }

    /// `innerText`'s length in Unicode scalars, counted without making it.
    var textLength: Int {
        var count = 0
        var pendingSpace = false
        var stack = [self]
        while let node = stack.popLast() {
            guard node.isText else {
                stack.append(contentsOf: node.children.reversed())
                continue
            }
            for scalar in node.text.unicodeScalars {
                if scalar.isASCII
                    ? (scalar.value == 0x20 || (0x09...0x0D).contains(scalar.value))
                    : scalar.properties.isWhitespace
                {
                    pendingSpace = count > 0
                } else {
                    count += pendingSpace ? 2 : 1
                    pendingSpace = false
                }
            }
        }
        return count
    }

    /// Runs of white space (ASCII's, and any other Unicode space) made one space, trimmed; on the
    /// UTF-8 bytes, since the extractor measures thousands of texts a page.
    static func collapse(_ text: String) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        var pendingSpace = false
        var utf8 = text.utf8.makeIterator()
        var scalars = text.unicodeScalars.makeIterator()
        // Walk scalars for non-ASCII (their spaces), bytes for ASCII, in step.
        while let scalar = scalars.next() {
            let width = scalar.utf8.count
            if scalar.isASCII {
                let byte = utf8.next()!
                if byte == 0x20 || (0x09...0x0D).contains(byte) {
                    pendingSpace = !bytes.isEmpty
                } else {
                    if pendingSpace { bytes.append(0x20) }
                    pendingSpace = false
                    bytes.append(byte)
                }
                continue
            }
            var encoded: [UInt8] = []
            for _ in 0..<width { encoded.append(utf8.next()!) }
            if scalar.properties.isWhitespace {
                pendingSpace = !bytes.isEmpty
            } else {
                if pendingSpace { bytes.append(0x20) }
                pendingSpace = false
                bytes.append(contentsOf: encoded)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    func hasAncestor(_ tag: String, depth: Int = 3) -> Bool {
        var node = parent
        var level = 0
        while let current = node, depth <= 0 || level < depth {
            if current.tag == tag { return true }
            node = current.parent
            level += 1
        }
        return false
    }

    func ancestors(_ depth: Int) -> [DOMNode] {
        var found: [DOMNode] = []
        var node = parent
        while let current = node, found.count < depth {
            found.append(current)
            node = current.parent
        }
        return found
    }
}

extension DOMNode {
    /// Limits on what a page may make: a hostile page stays bounded in memory and time.
    static let maxNodes = 400_000
    static let maxTextBytes = 2 << 20
    /// One text node's most: a megabyte of one paragraph is no article's.
    static let maxNodeTextBytes = 256 << 10
    static let maxAttributeBytes = 16 << 10

    /// The document of `html` as read by libxml2's HTML parser (the root node holding `<html>`), or
    /// nil when nothing could be read.
    static func parse(_ html: [UInt8]) throws(FeedError) -> DOMNode? {
        let xml = try LibXML2.shared.get()
        guard !html.isEmpty, html.count < Int(Int32.max) else { return nil }
        // RECOVER | NOERROR | NOWARNING | NONET; UTF-8 unless the bytes are not.
        let options: Int32 = 1 | 32 | 64 | 2048
        let encoding = String(validating: html, as: UTF8.self) != nil ? "UTF-8" : nil
        guard
            let document = html.withUnsafeBufferPointer({ buffer in
                buffer.withMemoryRebound(to: CChar.self) {
                    xml.readHTML($0.baseAddress, Int32($0.count), nil, encoding, options)
                }
            })
        else { return nil }
        defer { xml.freeDocument(document) }
        let root = DOMNode(tag: "#document")
        var stack = [root]
        var count = 0
        var textBytes = 0
        XMLTree.walk(
            document,
            enter: { element in
                count += 1
                guard count < maxNodes else { return false }
                let node = DOMNode(tag: element.name, attributes: attributes(element.node))
                stack.last!.append(node)
                stack.append(node)
                return true
            },
            text: { content in
                guard textBytes < maxTextBytes, count < maxNodes else { return }
                var text = String(cString: content)
                if text.utf8.count > maxNodeTextBytes { text = HTMLText.cut(text, to: maxNodeTextBytes / 4) }
                textBytes += text.utf8.count
                count += 1
                stack.last!.append(DOMNode(tag: "#text", text: text))
            },
            leave: { _ in
                if stack.count > 1 { stack.removeLast() }
            })
        return root
    }

    private static func attributes(_ node: UnsafeMutablePointer<xmlNode>) -> [(name: String, value: String)] {
        var found: [(String, String)] = []
        var property = node.pointee.properties
        var bytes = 0
        while let current = property, found.count < 64 {
            let name = current.pointee.name.map { String(cString: $0).lowercased() } ?? ""
            var value = ""
            var child = current.pointee.children
            while let part = child {
                value += part.pointee.content.map { String(cString: $0) } ?? ""
                child = part.pointee.next
            }
            bytes += value.utf8.count
            if bytes > maxAttributeBytes * 8 { break }
            if value.utf8.count <= maxAttributeBytes { found.append((name, value)) }
            property = current.pointee.next
        }
        return found
    }

    /// This node's children as HTML (attributes and text escaped).
    var innerHTML: String {
        var out = ""
        for child in children { child.write(to: &out) }
        return out
    }

    static let voidTags: Set<String> = [
        "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr",
    ]

    func write(to out: inout String) {
        if isText {
            out += HTMLText.escaped(text)
            return
        }
        out += "<" + tag
        for (name, value) in attributes where name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" })
        {
            out += " \(name)=\"\(HTMLText.escaped(value))\""
        }
        out += ">"
        guard !Self.voidTags.contains(tag) else { return }
        for child in children { child.write(to: &out) }
        out += "</\(tag)>"
    }
}
