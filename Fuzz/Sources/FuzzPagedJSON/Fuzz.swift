import FuzzSupport

/// Each input decoded as the seed format.
@_cdecl("FuzzPagedJSON_main")
func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    runFuzzer(argc, argv) { decode($0, $1, as: .pagedJSON) }
}
