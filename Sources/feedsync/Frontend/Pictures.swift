import ArgumentParser
import FeedSyncFrontend
import FeedSyncKit
import Foundation
import Synchronization

extension PrefetchMode: ExpressibleByArgument {}
extension ArticlePicturesMode: ExpressibleByArgument {}

/// `--cache-size`, shared by `pull` and `gc`; a given size is remembered for later runs.
struct PictureOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Picture cache budget, e.g. 500M or 2G; remembered for later runs. Default 1G.", valueName: "size"),
        transform: ByteSize.parse)
    var cacheSize: Int64?

    /// Pages past the reading position a window may reach (`--prefetch-pages`).
    static let prefetchPages = 0...1000

    func validate() throws {
        if let cacheSize { try check(cacheSize, in: FeedSync.cacheSizes, "--cache-size") }
    }
}
