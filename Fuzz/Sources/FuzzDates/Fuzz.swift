@testable import FeedSyncFeed
import Foundation
import FuzzDriver

/// libFuzzer's entry point: any text read as a date gives a date within the storable years or none.
/// The process's entry point (SwiftPM names an executable's `main` after its module): libFuzzer's driver.
@_cdecl("FuzzDates_main")
func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    var argc = argc
    var argv = argv
    return LLVMFuzzerRunDriver(&argc, &argv) { data, count in fuzz(UnsafeRawPointer(data), count) }
}

func fuzz(_ start: UnsafeRawPointer?, _ count: Int) -> Int32 {
    guard let start else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: start.assumingMemoryBound(to: UInt8.self), count: count))
    if let date = FeedDate.normalise(bytes) {
        precondition(date.utf8.count == 20, "a date is stored as 20 characters: \(date)")
    }
    return 0
}
