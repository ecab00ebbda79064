import FeedSyncFeed
import Foundation
import FuzzDriver

/// libFuzzer's entry point: one document, decoded as pagedJSON, must decode or be refused, never trap.
/// The process's entry point (SwiftPM names an executable's `main` after its module): libFuzzer's driver.
@_cdecl("FuzzPagedJSON_main")
func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    var argc = argc
    var argv = argv
    return LLVMFuzzerRunDriver(&argc, &argv) { data, count in fuzz(UnsafeRawPointer(data), count) }
}

func fuzz(_ start: UnsafeRawPointer?, _ count: Int) -> Int32 {
    guard let start else { return 0 }
    let context = DocumentContext(url: "https://fuzz.example/feed", headers: ["x-wp-total": "3"], page: 1)
    _ = try? FeedDocument.decode(Data(bytes: start, count: count), format: .pagedJSON, context: context)
    return 0
}
