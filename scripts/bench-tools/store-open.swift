// P5's and P8's floor, its first part: the least a Swift program on Linux does to open feedsync's
// store and read its schema, built as feedsync is (optimised, the Swift libraries and Foundation
// linked in statically), opening the file read-write as feedsync does. scripts/bench builds it
// with bench-tools/CSQLite's module map and adds SQLite's own time for the view's statements
// (bench-tools/sql-replay.c).
import CSQLite
import Foundation

let home = ProcessInfo.processInfo.environment["FEEDSYNC_HOME"] ?? "."
var database: OpaquePointer?
guard sqlite3_open_v2(home + "/feedsync.sqlite", &database, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK,
    sqlite3_exec(database, "SELECT count(*) FROM sqlite_schema", nil, nil, nil) == SQLITE_OK
else { exit(1) }
sqlite3_close(database)
