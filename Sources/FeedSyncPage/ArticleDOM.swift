internal import CXML
import FeedSyncMarkup
import FeedSyncModel
import Foundation

/// Owns every node of one page's extraction until it ends, so that a node's `parent` can be an
/// unowned reference: a weak one gives each parent a side table, and every retain and release of
/// it then takes the slow path (a fifth of the extraction's time, measured).
final class DOMArena {
    private var nodes: [DOMNode] = []

    func node(_ tag: String, attributes: [(name: String, value: String)] = [], text: String = "") -> DOMNode {
        let node = DOMNode(tag: tag, attributes: attributes, text: text, arena: self)
        nodes.append(node)
        return node
    }
}

/// A web page as a tree the article extractor can change: libxml2's HTML parser reads it (as a
/// browser reads broken HTML), and its events build these nodes (`DOMBuilder`), bounded.
final class DOMNode {
    /// The element's name in lower case; "#text" for text.
    var tag: String
    var attributes: [(name: String, value: String)]
    var children: [DOMNode] = []
    /// Never freed before this node: its arena holds both.
    unowned(unsafe) var parent: DOMNode?
    unowned(unsafe) let arena: DOMArena
    /// A text node's text; it never changes, so what is measured of it is kept (`metrics`).
    let text: String
    private var measured: TextMetrics?
    /// The class and the id in lower case, as bytes, for the extractor's word lists; kept until
    /// either changes.
    private var keptHints: (class: [UInt8], id: [UInt8])?
    /// The extractor's score, once it has one.
    var score: Double?

    fileprivate init(tag: String, attributes: [(name: String, value: String)], text: String, arena: DOMArena) {
        self.tag = tag
        isText = tag == "#text"
        self.attributes = attributes
        self.text = text
        self.arena = arena
    }

    /// A text node ("#text"): set when the node is made, as no element is ever renamed to or from it.
    let isText: Bool

    /// A text node of white space only (Unicode's).
    var isBlankText: Bool { isText && metrics.collapsed == 0 }

    subscript(_ name: String) -> String? {
        attributes.first { $0.name == name }?.value
    }

    func set(_ name: String, _ value: String?) {
        if name == "class" || name == "id" { keptHints = nil }
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

    /// Calls `visit` with every element below this one, in document order, until it returns false.
    /// The stack holds the nodes unretained: the arena keeps each alive (DOMArena), and retaining
    /// every node pushed was a third of a walk's time (measured).
    private func walkElements(_ visit: (DOMNode) -> Bool) {
        var stack: [Unmanaged<DOMNode>] = []
        func push(_ children: [DOMNode]) {
            var index = children.count
            while index > 0 {
                index -= 1
                stack.append(.passUnretained(children[index]))
            }
        }
        push(children)
        while let next = stack.popLast() {
            let node = next.takeUnretainedValue()
            guard !node.isText else { continue }
            guard visit(node) else { return }
            push(node.children)
        }
    }

    /// Calls `enter` for each element below this one in document order, `text` for each text
    /// node, and `leave` after the element's children; `enter` returning false skips them.
    func walk(enter: (DOMNode) -> Bool, text: (String) -> Void, leave: (DOMNode) -> Void) {
        var stack: [(parent: DOMNode, next: Int)] = [(self, 0)]
        while let (parent, index) = stack.last {
            guard index < parent.children.count else {
                stack.removeLast()
                if !stack.isEmpty { leave(parent) }
                continue
            }
            stack[stack.count - 1].next += 1
            let child = parent.children[index]
            if child.isText {
                text(child.text)
            } else if enter(child) {
                stack.append((child, 0))
            } else {
                leave(child)
            }
        }
    }

    /// Every element below this one named one of `tags` (all, without them), in document order.
    /// Tags are few and short, so comparing them beats hashing.
    func descendants(_ tags: [String]? = nil) -> [DOMNode] {
        var found: [DOMNode] = []
        walkElements { node in
            if tags?.contains(node.tag) ?? true { found.append(node) }
            return true
        }
        return found
    }

    /// The first element below this one named one of `tags`: stops there.
    func first(_ tags: [String]) -> DOMNode? {
        var found: DOMNode?
        walkElements { node in
            if tags.contains(node.tag) { found = node }
            return found == nil
        }
        return found
    }

    /// Whether an element below this one is `where`'s: stops at the first.
    func contains(where matching: (DOMNode) -> Bool) -> Bool {
        var found = false
        walkElements { node in
            found = matching(node)
            return !found
        }
        return found
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
    var innerText: String { HTMLText.collapsingWhitespace(textContent) }

    /// What the extractor measures of a text node's text, counted once.
    struct TextMetrics {
        /// Unicode scalars in all.
        var scalars = 0
        /// The length once trimmed and each run of white space made one space (0: only white space).
        var collapsed = 0
        /// White space before the first other scalar and after the last.
        var leading = 0
        var trailing = 0
        /// Commas, ASCII's and the full-width one.
        var commas = 0
    }

    var metrics: TextMetrics {
        if let measured { return measured }
        let metrics = text.utf8.withContiguousStorageIfAvailable(Self.measure) ?? Self.measure(Array(text.utf8))
        measured = metrics
        return metrics
    }

    /// What is measured of a text's UTF-8 bytes, a scalar at a time by its first byte; white space
    /// is Unicode's (`HTMLText.whitespaceWidth`).
    static func measure<Bytes: RandomAccessCollection<UInt8>>(_ bytes: Bytes) -> TextMetrics where Bytes.Index == Int {
        var metrics = TextMetrics()
        var pendingSpace = false
        var index = 0
        while index < bytes.count {
            metrics.scalars += 1
            if let width = HTMLText.whitespaceWidth(bytes, at: index) {
                index += width
                if metrics.collapsed == 0 { metrics.leading += 1 } else { pendingSpace = true }
                metrics.trailing += 1
                continue
            }
            let byte = bytes[index]
            // A comma, ASCII's or the full-width one (U+FF0C: EF BC 8C).
            if byte == 0x2C
                || byte == 0xEF && index + 2 < bytes.count && bytes[index + 1] == 0xBC && bytes[index + 2] == 0x8C
            {
                metrics.commas += 1
            }
            index += byte < 0x80 ? 1 : byte < 0xE0 ? 2 : byte < 0xF0 ? 3 : 4
            metrics.collapsed += pendingSpace ? 2 : 1
            pendingSpace = false
            metrics.trailing = 0
        }
        if metrics.collapsed == 0 { metrics.trailing = 0 }
        return metrics
    }

    /// What the extractor measures of the text below this node, from its text nodes' metrics.
    struct TextSummary {
        /// `innerText`'s length in Unicode scalars.
        var length = 0
        /// The length of the text trimmed, white space inside kept as it is.
        var trimmed = 0
        var commas = 0
    }

    var textSummary: TextSummary {
        var summary = TextSummary()
        var pendingSpace = false
        var total = 0
        var leading = 0
        var trailing = 0
        var stack = [self]
        while let node = stack.popLast() {
            guard node.isText else {
                stack.append(contentsOf: node.children.reversed())
                continue
            }
            let metrics = node.metrics
            total += metrics.scalars
            summary.commas += metrics.commas
            guard metrics.collapsed > 0 else {
                if metrics.scalars > 0 { pendingSpace = summary.length > 0 }
                if summary.length == 0 { leading += metrics.scalars } else { trailing += metrics.scalars }
                continue
            }
            if summary.length == 0 { leading += metrics.leading }
            if summary.length > 0, pendingSpace || metrics.leading > 0 { summary.length += 1 }
            summary.length += metrics.collapsed
            pendingSpace = metrics.trailing > 0
            trailing = metrics.trailing
        }
        summary.trimmed = summary.length == 0 ? 0 : total - leading - trailing
        return summary
    }

    /// `innerText`'s length in Unicode scalars, counted without making it.
    var textLength: Int { textSummary.length }

    /// The class and the id in lower case, as bytes.
    var hints: (class: [UInt8], id: [UInt8]) {
        if let keptHints { return keptHints }
        let hints = (Array((self["class"] ?? "").lowercased().utf8), Array((self["id"] ?? "").lowercased().utf8))
        keptHints = hints
        return hints
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
    /// nil when nothing could be read. The parser's events build the tree its own SAX2 handlers
    /// would build (`DOMBuilder`), without libxml2's tree to copy and free.
    static func parse(_ html: [UInt8], into arena: DOMArena) throws(FeedError) -> DOMNode? {
        let xml = try LibXML2.shared.get()
        guard !html.isEmpty, html.count < Int(Int32.max) else { return nil }
        // RECOVER | NOERROR | NOWARNING | NONET; UTF-8 unless the bytes are not.
        let options: Int32 = 1 | 32 | 64 | 2048
        let encoding = String(validating: html, as: UTF8.self) != nil ? "UTF-8" : nil
        let builder = DOMBuilder(arena: arena, xml: xml)
        let read = withExtendedLifetime(builder) {
            html.withUnsafeBufferPointer { buffer in
                buffer.withMemoryRebound(to: CChar.self) {
                    xml.readHTML(
                        $0, encoding: encoding, options: options, handler: DOMBuilder.events,
                        user: Unmanaged.passUnretained(builder).toOpaque())
                }
            }
        }
        guard read else { return nil }
        builder.endText()
        return builder.root
    }

    /// This node's children as HTML (attributes and text escaped).
    var innerHTML: String {
        var out = ""
        for child in children { child.write(to: &out) }
        return out
    }

    func write(to out: inout String) {
        if isText {
            out += HTMLText.escaped(text)
            return
        }
        out += "<"
        out += tag
        for (name, value) in attributes where HTMLNames.isPlainName(name) {
            out += " "
            out += name
            out += "=\""
            out += HTMLText.escaped(value)
            out += "\""
        }
        out += ">"
        // libxml2's HTML 4 parser puts what follows a void element it does not know (`<wbr>`,
        // `<source>`) inside it: written after it, where a browser reads it.
        for child in children { child.write(to: &out) }
        guard !HTMLNames.voidTags.contains(tag) else { return }
        out += "</"
        out += tag
        out += ">"
    }
}

/// Builds a page's `DOMNode`s from libxml2's HTML parser events as its SAX2 tree builder
/// (`xmlSAX2StartElement`, `xmlSAX2Text`, libxml2 2.9) would build its tree, bounded:
///
/// - an element's name is what follows the first colon of a prefixed name (`fb:like` is `like`);
///   a valueless attribute's value is its name when HTML calls it boolean, else empty;
/// - adjacent text of one kind is one node (text and CDATA apart, and a comment keeps two apart);
/// - an element with no element open goes into the document's first child when that is an element,
///   else beside it; text with no element open is dropped;
/// - the parser stops at an element opened with 257 open, and at a text node growing past
///   10 000 000 bytes (`XML_MAX_TEXT_LENGTH`), as libxml2's tree builder stops it.
final class DOMBuilder {
    let arena: DOMArena
    let xml: LibXML2
    let root: DOMNode
    /// The elements open, innermost last; nil for one not kept (past `DOMNode.maxNodes`).
    private var open: [DOMNode?] = []
    /// The document's first child is an element: this one (no doctype or comment came first).
    private var firstElement: DOMNode?
    private var documentHasChildren = false
    /// The text of the node being gathered, and whether it is CDATA (a script's or style's).
    private var text: [UInt8] = []
    private var textIsCDATA = false
    private var count = 0
    private var textBytes = 0
    private var stopped = false

    init(arena: DOMArena, xml: LibXML2) {
        self.arena = arena
        self.xml = xml
        root = arena.node("#document")
    }

    /// libxml2's HTML parser stops its tree here (`xmlParserMaxDepth`, `XML_MAX_TEXT_LENGTH`).
    static let maxDepth = 256
    static let maxTextLength = 10_000_000

    static func events(_ handler: inout xmlSAXHandler) {
        handler.startElement = { context, name, attributes in
            if let name { DOMBuilder.builder(context).start(name, attributes, context) }
        }
        handler.endElement = { context, _ in DOMBuilder.builder(context).end() }
        handler.characters = { context, bytes, count in
            DOMBuilder.builder(context).add(bytes, count, cdata: false, context)
        }
        handler.cdataBlock = { context, bytes, count in
            DOMBuilder.builder(context).add(bytes, count, cdata: true, context)
        }
        handler.comment = { context, _ in DOMBuilder.builder(context).other() }
        handler.processingInstruction = { context, _, _ in DOMBuilder.builder(context).other() }
        handler.internalSubset = { context, _, _, _ in DOMBuilder.builder(context).doctype() }
    }

    private static func builder(_ context: UnsafeMutableRawPointer?) -> DOMBuilder {
        let user = context!.assumingMemoryBound(to: xmlParserCtxt.self).pointee._private!
        return Unmanaged<DOMBuilder>.fromOpaque(user).takeUnretainedValue()
    }

    private func start(
        _ name: UnsafePointer<UInt8>, _ attributes: UnsafeMutablePointer<UnsafePointer<UInt8>?>?,
        _ context: UnsafeMutableRawPointer?
    ) {
        guard !stopped else { return }
        endText()
        guard open.count <= Self.maxDepth else { return stop(context) }
        count += 1
        // The open element (nil when not kept), else where libxml2 puts one with none open.
        let parent = open.last ?? (documentHasChildren ? firstElement ?? root : root)
        guard count < DOMNode.maxNodes, let parent else {
            open.append(nil)
            return
        }
        let node = arena.node(Self.elementName(name), attributes: self.attributes(attributes))
        parent.append(node)
        open.append(node)
        if !documentHasChildren {
            documentHasChildren = true
            firstElement = node
        }
    }

    private func end() {
        guard !stopped else { return }
        endText()
        if !open.isEmpty { open.removeLast() }
    }

    private func add(_ bytes: UnsafePointer<UInt8>?, _ length: Int32, cdata: Bool, _ context: UnsafeMutableRawPointer?)
    {
        guard !stopped, let bytes, length > 0, case .some(.some) = open.last else { return }
        if cdata != textIsCDATA { endText() }
        guard text.isEmpty || text.count + Int(length) <= Self.maxTextLength else {
            endText()
            return stop(context)
        }
        textIsCDATA = cdata
        text.append(contentsOf: UnsafeBufferPointer(start: bytes, count: Int(length)))
    }

    private func stop(_ context: UnsafeMutableRawPointer?) {
        stopped = true
        xml.stopParser(context?.assumingMemoryBound(to: xmlParserCtxt.self))
    }

    /// A comment or processing instruction: kept by libxml2's tree, not by this one.
    private func other() {
        guard !stopped else { return }
        endText()
        if open.isEmpty, !documentHasChildren {
            documentHasChildren = true
            firstElement = nil
        }
    }

    /// The doctype: libxml2 puts it first among the document's children.
    private func doctype() {
        documentHasChildren = true
        firstElement = nil
    }

    /// Ends the text node being gathered, bounded.
    func endText() {
        guard !text.isEmpty else { return }
        defer { text.removeAll(keepingCapacity: true) }
        guard textBytes < DOMNode.maxTextBytes, count < DOMNode.maxNodes, case let parent?? = open.last else { return }
        var content = String(decoding: text, as: UTF8.self)
        if content.utf8.count > DOMNode.maxNodeTextBytes {
            content = HTMLText.cut(content, to: DOMNode.maxNodeTextBytes / 4)
        }
        textBytes += content.utf8.count
        count += 1
        parent.append(arena.node("#text", text: content))
    }

    /// What libxml2's tree names an element: what follows the first colon of a prefixed name
    /// (`xmlSplitQName`), unless the name starts or ends with it.
    static func elementName(_ name: UnsafePointer<UInt8>) -> String {
        guard name[0] != UInt8(ascii: ":"), let colon = strchr(name, Int32(UInt8(ascii: ":"))) else {
            return XMLTree.lowercased(name)
        }
        let local = UnsafeRawPointer(colon).assumingMemoryBound(to: UInt8.self) + 1
        return local[0] == 0 ? XMLTree.lowercased(name) : XMLTree.lowercased(local)
    }

    /// The element's attributes, bounded: at most 64, each value at most `maxAttributeBytes`.
    private func attributes(_ list: UnsafeMutablePointer<UnsafePointer<UInt8>?>?) -> [(name: String, value: String)] {
        guard let list else { return [] }
        var found: [(name: String, value: String)] = []
        var bytes = 0
        var index = 0
        while let name = list[index], found.count < 64 {
            let value =
                list[index + 1].map { String(cString: $0) }
                ?? (xml.isBooleanAttribute(name) != 0 ? String(cString: name) : "")
            index += 2
            bytes += value.utf8.count
            if bytes > DOMNode.maxAttributeBytes * 8 { break }
            if value.utf8.count <= DOMNode.maxAttributeBytes { found.append((XMLTree.lowercased(name), value)) }
        }
        return found
    }
}
