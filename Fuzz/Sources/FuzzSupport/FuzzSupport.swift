import FeedSyncFeed
import Foundation
import FuzzDriver

/// What a target's `main` does (SwiftPM names an executable's main after its module, so each
/// target defines `<Module>_main` and calls this): runs libFuzzer's driver with `test`, which gets
/// each input and returns 0.
public func runFuzzer(
    _ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?,
    _ test: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32
) -> Int32 {
    var argc = argc
    var argv = argv
    return LLVMFuzzerRunDriver(&argc, &argv, test)
}

/// The input as bytes.
public func bytes(_ data: UnsafePointer<UInt8>?, _ count: Int) -> [UInt8] {
    data.map { Array(UnsafeBufferPointer(start: $0, count: count)) } ?? []
}

/// One document decoded as `format`: it decodes or is refused, never traps.
public func decode(_ data: UnsafePointer<UInt8>?, _ count: Int, as format: FeedFormat) -> Int32 {
    let context = DocumentContext(url: "https://fuzz.example/feed", headers: ["x-wp-total": "3"], page: 1)
    _ = try? FeedDocument.decode(Data(bytes(data, count)), format: format, context: context)
    return 0
}
