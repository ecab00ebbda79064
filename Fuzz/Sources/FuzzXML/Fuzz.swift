import FuzzSupport

/// Each input decoded as RSS and Atom: XMLInput, libxml2 in recovery, XMLFeed.
@_cdecl("FuzzXML_main")
func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    runFuzzer(argc, argv) { decode($0, $1, as: .rss) }
}
