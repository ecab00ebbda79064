@testable import FeedSyncFeed
import Foundation
import FuzzDriver

/// libFuzzer's entry point: HTML made text, cut, searched for its first picture, its references decoded.
/// The process's entry point (SwiftPM names an executable's `main` after its module): libFuzzer's driver.
@_cdecl("FuzzHTMLText_main")
func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    var argc = argc
    var argv = argv
    return LLVMFuzzerRunDriver(&argc, &argv) { data, count in fuzz(UnsafeRawPointer(data), count) }
}

func fuzz(_ start: UnsafeRawPointer?, _ count: Int) -> Int32 {
    guard let start else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: start.assumingMemoryBound(to: UInt8.self), count: count))
    _ = HTMLText.plain(bytes, limit: 200)  // enough for a cut to 200, not cut itself
    let summary = HTMLText.summary(bytes, limit: 50)
    precondition(summary.count <= 51, "a summary within its limit, an ellipsis included")
    _ = HTMLText.firstImageSource(bytes)
    _ = HTMLText.decodeEntities(String(decoding: bytes, as: UTF8.self))
    _ = HTMLText.cut(String(decoding: bytes, as: UTF8.self), to: 10)
    return 0
}
