import GRDB

// Values read back from the store, leniently. SQLite keeps whatever a column is given, and a store
// edited by another tool or damaged on disk may hold a blob of bytes that are not UTF-8, or a
// number, where text belongs: GRDB's typed subscripts trap on those. Text is decoded with
// replacement characters; a number where text belongs is its decimal text; anything that is not
// a whole number where one belongs is absent.
extension Row {
    func text(_ column: String) -> String? {
        switch (self[column] as DatabaseValue).storage {
        case .null: nil
        case .string(let text): text
        case .blob(let bytes): String(decoding: bytes, as: UTF8.self)
        case .int64(let number): String(number)
        case .double(let number): String(number)
        }
    }

    func integer(_ column: String) -> Int? {
        switch (self[column] as DatabaseValue).storage {
        case .int64(let number): Int(number)
        case .double(let number): Int(exactly: number)
        case .string(let text): Int(text)
        case .null, .blob: nil
        }
    }

    /// A whole number within `range`, else absent: a value that feeds arithmetic.
    func integer(_ column: String, in range: ClosedRange<Int>) -> Int? {
        integer(column).flatMap { range.contains($0) ? $0 : nil }
    }

    func real(_ column: String) -> Double? {
        switch (self[column] as DatabaseValue).storage {
        case .int64(let number): Double(number)
        case .double(let number): number.isFinite ? number : nil
        case .string(let text): Double(text).flatMap { $0.isFinite ? $0 : nil }
        case .null, .blob: nil
        }
    }
}
