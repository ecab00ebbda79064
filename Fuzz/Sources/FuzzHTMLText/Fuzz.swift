@testable import FeedSyncMarkup
import FuzzSupport

/// Each input as HTML: made text, summarised within its limit, searched for its first picture,
/// its references decoded, cut.
@_cdecl("FuzzHTMLText_main")
func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    runFuzzer(argc, argv) { data, count in
        let html = bytes(data, count)
        _ = HTMLText.plain(html, limit: 200)  // enough for a cut to 200, not cut itself
        let summary = HTMLText.summary(html, limit: 50)
        precondition(summary.count <= 51, "a summary within its limit, an ellipsis included")
        _ = HTMLText.firstImageSource(html)
        _ = HTMLText.decodeEntities(String(decoding: html, as: UTF8.self))
        _ = HTMLText.cut(String(decoding: html, as: UTF8.self), to: 10)
        return 0
    }
}
