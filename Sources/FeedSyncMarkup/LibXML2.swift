package import CXML
import FeedSyncModel
import Foundation

/// The libxml2 calls XMLFeed makes, found in the library loaded on first use (as libcurl is), so
/// `list`, `status` and pulls of JSON feeds never load it, nor the ICU, zlib and liblzma libraries
/// Debian's build pulls in: over a millisecond of every start (BENCHMARKS.md).
package struct LibXML2: Sendable {
    package typealias Context = UnsafeMutablePointer<xmlParserCtxt>
    package let saxVersion: @convention(c) (UnsafeMutablePointer<xmlSAXHandler>?, Int32) -> Int32
    package let createPushParser:
        @convention(c) (
            UnsafeMutablePointer<xmlSAXHandler>?, UnsafeMutableRawPointer?, UnsafePointer<CChar>?, Int32,
            UnsafePointer<CChar>?
        ) -> Context?
    package let useOptions: @convention(c) (Context?, Int32) -> Int32
    package let parseChunk: @convention(c) (Context?, UnsafePointer<CChar>?, Int32, Int32) -> Int32
    package let stopParser: @convention(c) (Context?) -> Void
    package let freeParser: @convention(c) (Context?) -> Void
    package let freeDocument: @convention(c) (UnsafeMutablePointer<xmlDoc>?) -> Void
    /// The XML reader that builds a tree, for OPML files.
    package let readXML:
        @convention(c) (UnsafePointer<CChar>?, Int32, UnsafePointer<CChar>?, UnsafePointer<CChar>?, Int32) ->
            UnsafeMutablePointer<xmlDoc>?
    /// A node's line, past the 65 535 its own field holds.
    package let lineNumber: @convention(c) (UnsafePointer<xmlNode>?) -> Int
    /// The HTML parser, for feed autodiscovery in a web page.
    package let readHTML:
        @convention(c) (UnsafePointer<CChar>?, Int32, UnsafePointer<CChar>?, UnsafePointer<CChar>?, Int32) ->
            UnsafeMutablePointer<xmlDoc>?

    /// The HTML parser's own parts, for reading a page as events (`readHTML(_:encoding:options:handler:user:)`).
    package let createMemoryParser: @convention(c) (UnsafePointer<CChar>?, Int32) -> Context?
    package let useHTMLOptions: @convention(c) (Context?, Int32) -> Int32
    package let findEncoding: @convention(c) (UnsafePointer<CChar>?) -> xmlCharEncodingHandlerPtr?
    package let switchEncoding: @convention(c) (Context?, xmlCharEncodingHandlerPtr?) -> Int32
    package let parseHTML: @convention(c) (Context?) -> Int32
    package let isBooleanAttribute: @convention(c) (UnsafePointer<UInt8>?) -> Int32
    package let copyString: @convention(c) (UnsafePointer<UInt8>?) -> UnsafeMutablePointer<UInt8>?
    /// libxml2's deallocator (its `xmlFree` variable's value).
    package let free: @convention(c) (UnsafeMutableRawPointer?) -> Void

    /// Loaded and initialised once, before any thread parses.
    package static let shared: Result<LibXML2, FeedError> = load()

    private static func load() -> Result<LibXML2, FeedError> {
        guard let library = dlopen("libxml2.so.2", RTLD_NOW | RTLD_LOCAL) else {
            let reason = dlerror().map { String(cString: $0) } ?? "not found"
            return .failure(FeedError("cannot load libxml2 to read RSS or Atom (\(reason)); install Debian's libxml2"))
        }
        func find<T>(_ name: String) throws(FeedError) -> T {
            guard let symbol = dlsym(library, name) else { throw FeedError("libxml2.so.2 has no \(name)") }
            return unsafeBitCast(symbol, to: T.self)
        }
        do {
            let initialise: @convention(c) () -> Void = try find("xmlInitParser")
            initialise()
            return .success(
                LibXML2(
                    saxVersion: try find("xmlSAXVersion"),
                    createPushParser: try find("xmlCreatePushParserCtxt"),
                    useOptions: try find("xmlCtxtUseOptions"),
                    parseChunk: try find("xmlParseChunk"),
                    stopParser: try find("xmlStopParser"),
                    freeParser: try find("xmlFreeParserCtxt"),
                    freeDocument: try find("xmlFreeDoc"),
                    readXML: try find("xmlReadMemory"),
                    lineNumber: try find("xmlGetLineNo"),
                    readHTML: try find("htmlReadMemory"),
                    createMemoryParser: try find("xmlCreateMemoryParserCtxt"),
                    useHTMLOptions: try find("htmlCtxtUseOptions"),
                    findEncoding: try find("xmlFindCharEncodingHandler"),
                    switchEncoding: try find("xmlSwitchToEncoding"),
                    parseHTML: try find("htmlParseDocument"),
                    isBooleanAttribute: try find("htmlIsBooleanAttr"),
                    copyString: try find("xmlStrdup"),
                    free: (try find("xmlFree") as UnsafeMutablePointer<xmlFreeFunc?>).pointee!))
        } catch {
            return .failure(error)
        }
    }
}

extension LibXML2 {
    /// Reads HTML as `readHTML` (`htmlReadMemory`) does, step for step, but sends its events to the
    /// SAX1 callbacks `handler` sets instead of building a tree; `user` is in the context's
    /// `_private` for them. False when the parser could not start.
    package func readHTML(
        _ bytes: UnsafeBufferPointer<CChar>, encoding: String?, options: Int32,
        handler: (inout xmlSAXHandler) -> Void, user: UnsafeMutableRawPointer
    ) -> Bool {
        guard let context = createMemoryParser(bytes.baseAddress, Int32(bytes.count)) else { return false }
        defer { freeParser(context) }
        guard let sax = context.pointee.sax else { return false }
        // No document: what the tree would be is the handler's to build.
        var events = xmlSAXHandler()
        handler(&events)
        events.initialized = 1  // SAX1's element events, which the HTML parser sends
        sax.pointee = events
        context.pointee._private = user
        _ = useHTMLOptions(context, options)
        context.pointee.html = 1
        if let encoding, let converter = findEncoding(encoding), let input = context.pointee.input {
            _ = switchEncoding(context, converter)
            if let declared = input.pointee.encoding { free(UnsafeMutableRawPointer(mutating: declared)) }
            input.pointee.encoding = UnsafePointer(copyString(encoding))
        }
        _ = parseHTML(context)
        return true
    }
}
