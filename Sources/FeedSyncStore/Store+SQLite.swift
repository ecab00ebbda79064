import FeedSyncModel
import Foundation
import GRDB
internal import GRDBSQLite

// Two statements, the page commit's item insert and its search-index insert (each run once per
// item), are GRDB cached statements bound and stepped through SQLite's C API: with GRDB's
// `StatementArguments` (every value boxed, bound through nested closures) a 300 000-item ingest
// took over a third longer (BENCHMARKS.md, "GRDB's statement API").
// Every other statement goes through GRDB. GRDB's transaction observers do not see what these
// step, so the commit calls `Database.notifyChanges(in:)` for the item table afterwards. Values
// are bound as GRDB binds them (text up to its first NUL, copied by SQLite).

/// The values bound to a statement, in order.
struct Bindings {
    fileprivate let handle: SQLiteStatement
    fileprivate var count: CInt = 0
    fileprivate var failure: CInt = SQLITE_OK

    mutating func add(_ value: Int64?) {
        bind { handle, index in value.map { sqlite3_bind_int64(handle, index, $0) } }
    }

    mutating func add(_ value: Int?) { add(value.map(Int64.init)) }

    mutating func add(_ value: Double?) {
        bind { handle, index in value.map { sqlite3_bind_double(handle, index, $0) } }
    }

    mutating func add(_ value: String?) {
        bind { handle, index in
            guard var value else { return nil }
            // withUTF8, not the C string a String argument becomes: that copies a short string
            // (stored inline) to the heap first. Up to the first NUL, as GRDB binds text.
            return value.withUTF8 { text in
                // memchr: an item's content runs to kilobytes, searched byte by byte in Swift.
                let nul = text.baseAddress.flatMap { start in
                    memchr(start, 0, text.count).map { UnsafeRawPointer(start).distance(to: $0) }
                }
                let count = nul ?? text.count
                guard count > 0, let start = text.baseAddress else {
                    return sqlite3_bind_text(handle, index, "", 0, transient)  // '', not the NULL a nil start binds
                }
                // The 64-bit call: text past SQLite's limit is SQLITE_TOOBIG, not a trap converting its length.
                return start.withMemoryRebound(to: CChar.self, capacity: count) {
                    sqlite3_bind_text64(handle, index, $0, UInt64(count), transient, UInt8(SQLITE_UTF8))
                }
            }
        }
    }

    /// Binds the next parameter with `body`, NULL when it binds nothing.
    private mutating func bind(_ body: (SQLiteStatement, CInt) -> CInt?) {
        count += 1
        let code = body(handle, count) ?? sqlite3_bind_null(handle, count)
        if failure == SQLITE_OK { failure = code }
    }
}

/// `strings` as a JSON array, for `json_each`: only `"`, `\` and control characters escaped
/// (Foundation's `JSONEncoder` took a twentieth of the store's time in a large ingest).
func jsonArray(_ strings: [String]) -> String {
    var out: [UInt8] = [UInt8(ascii: "[")]
    out.reserveCapacity(strings.reduce(2) { $0 + $1.utf8.count + 3 })
    let hex = Array("0123456789abcdef".utf8)
    for (index, string) in strings.enumerated() {
        if index > 0 { out.append(UInt8(ascii: ",")) }
        out.append(UInt8(ascii: "\""))
        for byte in string.utf8 {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): out += [UInt8(ascii: "\\"), byte]
            case 0..<0x20: out += Array("\\u00".utf8) + [hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
    out.append(UInt8(ascii: "]"))
    return String(decoding: out, as: UTF8.self)
}

extension Statement {
    /// Resets the statement, binds what `bind` adds, and steps it to its end.
    func run(_ db: Database, _ bind: (inout Bindings) -> Void) throws {
        sqlite3_reset(sqliteStatement)
        var bindings = Bindings(handle: sqliteStatement)
        bind(&bindings)
        guard bindings.count == sqlite3_bind_parameter_count(sqliteStatement) else {
            throw DatabaseError(
                resultCode: .SQLITE_RANGE,
                message: "\(bindings.count) values for \(sqlite3_bind_parameter_count(sqliteStatement)) parameters",
                sql: sql)
        }
        guard bindings.failure == SQLITE_OK else {
            // Binds that succeeded after the failed one cleared the connection's message.
            throw DatabaseError(
                resultCode: ResultCode(rawValue: bindings.failure),
                message: String(cString: sqlite3_errstr(bindings.failure)), sql: sql)
        }
        switch sqlite3_step(sqliteStatement) {
        case SQLITE_DONE, SQLITE_ROW: return
        case let code: throw failure(db, code)
        }
    }

    private func failure(_ db: Database, _ code: CInt) -> DatabaseError {
        let message = String(cString: sqlite3_errmsg(db.sqliteConnection))
        sqlite3_reset(sqliteStatement)
        return DatabaseError(resultCode: ResultCode(rawValue: code), message: message, sql: sql)
    }
}

/// SQLite copies the value before the bind call returns (SQLITE_TRANSIENT, a C macro).
private let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
