import FuzzSupport

/// Each input decoded as JSON Feed.
@_cdecl("FuzzJSONFeed_main")
func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    runFuzzer(argc, argv) { decode($0, $1, as: .jsonFeed) }
}
