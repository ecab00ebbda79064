// The public surface of FeedSyncImages: picture prefetch for the rows the reader will see next,
// into a disk cache that holds only verified images, within a byte budget.

import FeedSyncStore
import FeedSyncTransport
import Foundation

/// Which pictures a pull downloads.
public enum PrefetchMode: String, Sendable, CaseIterable {
    /// The rows from one page before the reading position to `pagesAhead` pages after it.
    case window
    /// Every picture, nearest to the reading position first.
    case all
    case none
}

public struct PrefetchOptions: Sendable {
    public var mode: PrefetchMode
    public var pagesAhead: Int
    public var concurrency: Int
    public var maxBytes: Int
    /// The cache's byte budget; pictures farthest from the reader are evicted beyond it.
    public var cacheBudget: Int64

    public init(mode: PrefetchMode = .window, pagesAhead: Int = 5, concurrency: Int = 8,
                maxBytes: Int = 10 << 20, cacheBudget: Int64 = 1 << 30) {
        self.mode = mode
        self.pagesAhead = pagesAhead
        self.concurrency = concurrency
        self.maxBytes = maxBytes
        self.cacheBudget = cacheBudget
    }
}

/// What prefetch does, for `--verbose` and the progress line.
public enum PictureEvent: Sendable {
    case planned(queued: Int, dropped: Int)
    case cached(url: String, bytes: Int)
    case failed(url: String, reason: String)
    case evicted(count: Int, bytes: Int64)
}

/// The kinds of image the cache accepts, recognised by their first bytes, never by a header.
public enum ImageKind: String, Sendable {
    case png, jpeg, gif, webp, avif, heif, bmp

    public var fileExtension: String {
        switch self {
        case .jpeg: "jpg"
        default: rawValue
        }
    }

    public var mime: String { "image/\(self == .heif ? "heic" : rawValue)" }

    public static func sniff(_ data: Data) -> ImageKind? {
        let bytes = [UInt8](data.prefix(16))
        func starts(_ prefix: [UInt8], at offset: Int = 0) -> Bool {
            bytes.count >= offset + prefix.count && Array(bytes[offset..<(offset + prefix.count)]) == prefix
        }
        if starts([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return .png }
        if starts([0xFF, 0xD8, 0xFF]) { return .jpeg }
        if starts(Array("GIF87a".utf8)) || starts(Array("GIF89a".utf8)) { return .gif }
        if starts(Array("RIFF".utf8)), starts(Array("WEBP".utf8), at: 8) { return .webp }
        if starts(Array("ftyp".utf8), at: 4), bytes.count >= 12 {
            switch String(decoding: bytes[8..<12], as: UTF8.self) {
            case "avif", "avis": return .avif
            case "heic", "heix", "hevc", "hevx", "mif1", "msf1": return .heif
            default: return nil
            }
        }
        if starts(Array("BM".utf8)), bytes.count >= 14 { return .bmp }
        return nil
    }
}
