@testable import FeedSyncMarkup
import FuzzSupport

/// Each input read as a date gives one within the storable years (20 characters) or none.
@_cdecl("FuzzDates_main")
func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    runFuzzer(argc, argv) { data, count in
        if let date = FeedDate.normalise(bytes(data, count)) {
            precondition(date.utf8.count == 20, "a date is stored as 20 characters: \(date)")
        }
        return 0
    }
}
