import FeedSyncModel
import Foundation

/// Any JSON value, decoded without guessing: a boolean is never a number, a number never a string.
package enum JSONValue: Sendable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)

    /// The value at `key` when this is an object.
    package subscript(key: String) -> JSONValue? {
        if case .object(let object) = self { object[key] } else { nil }
    }

    /// A non-empty trimmed string; a whole number is accepted as its decimal text (ids often are).
    package var text: String? {
        switch self {
        case .string(let string):
            let trimmed = string.trimmed
            return trimmed.isEmpty ? nil : trimmed
        case .number:
            return integer.map(String.init)
        default:
            return nil
        }
    }

    package var integer: Int? {
        switch self {
        case .number(let value) where value.rounded() == value && abs(value) < 1e15: Int(value)
        case .string(let string): Int(string.trimmed)
        default: nil
        }
    }

    package var boolean: Bool? {
        switch self {
        case .bool(let value): value
        case .number(let value): value != 0
        case .string("true"): true
        case .string("false"): false
        default: nil
        }
    }
}

/// An object's members in document order; a name given twice means its last value, as a
/// dictionary built in order would. Looked up by a scan: a feed's objects have a handful of
/// members, and hashing every name going in and every name asked for was a quarter of a paged-JSON
/// page's decoding (BENCHMARKS.md, P4).
package struct JSONObject: Sendable {
    package struct Member: Sendable {
        package var name: String
        package var value: JSONValue
    }

    package var members: [Member] = []

    package subscript(name: String) -> JSONValue? { members.last { $0.name == name }?.value }
}
