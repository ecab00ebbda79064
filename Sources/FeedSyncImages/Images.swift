// FeedSyncImages: the picture cache and its prefetch. Its public API: this file (what a picture
// must be, ImageKind), PictureCache (the cache's one owner, over PictureFolder) and
// PicturePrefetcher with its PrefetchRun (Prefetcher.swift, Prefetcher+Download.swift) over
// PrefetchMachine, CacheRoom and CacheBudget. The options and events are FeedSyncModel's.

import FeedSyncModel
import FeedSyncStore
import FeedSyncTransport
import Foundation

/// The kinds of image the cache accepts, recognised by their first bytes, never by a header.
public enum ImageKind: String, Sendable, CaseIterable {
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

    /// The most pixels a picture may have along either side: a header claiming more is damaged
    /// or hostile.
    static let maxSide = 100_000

    /// The most bytes read for a header. JPEG and HEIF put their size after metadata (EXIF, ICC
    /// profiles, XMP: each segment at most 64 KiB); a size not found within this prefix is not a
    /// picture's, so checking costs the same whatever the file's length.
    public static let headerLimit = 256 << 10

    /// The width and height the picture's header gives, when the first `headerLimit` bytes of
    /// `data` hold the whole header of a `kind` picture and both are from 1 to `maxSide`; nil
    /// otherwise. Bytes that start like an image and go on as something else (an HTML page behind
    /// a PNG signature, random bytes behind an `ftyp` box) give none.
    public static func dimensions(of data: Data, as kind: ImageKind) -> (width: Int, height: Int)? {
        let bytes = [UInt8](data.prefix(kind == .jpeg || kind == .avif || kind == .heif ? headerLimit : 64))
        func big(_ at: Int, _ count: Int) -> Int? {
            guard at >= 0, at + count <= bytes.count else { return nil }
            return bytes[at..<(at + count)].reduce(0) { $0 << 8 | Int($1) }
        }
        func little(_ at: Int, _ count: Int) -> Int? {
            guard at >= 0, at + count <= bytes.count else { return nil }
            return bytes[at..<(at + count)].reversed().reduce(0) { $0 << 8 | Int($1) }
        }
        func tag(_ at: Int, _ text: String) -> Bool {
            let expected = Array(text.utf8)
            return at + expected.count <= bytes.count && Array(bytes[at..<(at + expected.count)]) == expected
        }
        var size: (Int, Int)?
        switch kind {
        case .png:
            if big(8, 4) == 13, tag(12, "IHDR"), let width = big(16, 4), let height = big(20, 4), bytes.count >= 33 {
                size = (width, height)
            }
        case .gif:
            if let width = little(6, 2), let height = little(8, 2), bytes.count >= 13 { size = (width, height) }
        case .bmp:
            switch little(14, 4) {
            case 12?: if let width = little(18, 2), let height = little(20, 2) { size = (width, height) }
            case let header? where header >= 40:
                if let width = little(18, 4), let height = little(22, 4) {
                    size = (width, height >= 1 << 31 ? (1 << 32) - height : height)  // negative: top-down
                }
            default: break
            }
        case .webp:
            if tag(12, "VP8 "), big(23, 3) == 0x9D012A, let width = little(26, 2), let height = little(28, 2) {
                size = (width & 0x3FFF, height & 0x3FFF)
            } else if tag(12, "VP8L"), bytes.count > 24, bytes[20] == 0x2F, let bits = little(21, 4) {
                size = ((bits & 0x3FFF) + 1, (bits >> 14 & 0x3FFF) + 1)
            } else if tag(12, "VP8X"), let width = little(24, 3), let height = little(27, 3) {
                size = (width + 1, height + 1)
            }
        case .jpeg:
            // Segments from the start-of-image marker to the first start-of-frame, which holds the size.
            var at = 2
            scan: while at + 4 <= bytes.count {
                guard bytes[at] == 0xFF else {  // stray bytes between segments: decoders skip them
                    at += 1
                    continue
                }
                let marker = bytes[at + 1]
                switch marker {
                case 0xFF: at += 1  // fill byte
                case 0xD0...0xD7, 0x01: at += 2
                case 0xC0...0xC3, 0xC5...0xC7, 0xC9...0xCB, 0xCD...0xCF:
                    if let height = big(at + 5, 2), let width = big(at + 7, 2) { size = (width, height) }
                    break scan
                case 0xDA, 0xD9: break scan  // scan data or the end, and no frame yet
                default:
                    guard let length = big(at + 2, 2), length >= 2 else { break scan }
                    at += 2 + length
                }
            }
        case .avif, .heif:
            size = isoBoxSize(bytes, big: big, tag: tag)
        }
        guard let (width, height) = size, (1...maxSide).contains(width), (1...maxSide).contains(height) else {
            return nil
        }
        return (width, height)
    }

    /// An ISO-BMFF file's picture size, by walking its boxes as a decoder does (never by searching
    /// the bytes): a still image's spatial extents (`meta` › `iprp` › `ipco` › `ispe`: version and
    /// flags, then width and height), else an image sequence's first track header (`moov` › `trak`
    /// › `tkhd`: 16.16 fixed-point sizes after 76 bytes in version 0, 88 in version 1). A box whose
    /// size does not fit its parent ends the walk with none.
    private static func isoBoxSize(
        _ bytes: [UInt8], big: (Int, Int) -> Int?, tag: (Int, String) -> Bool
    ) -> (Int, Int)? {
        var boxes = 0  // a bound on the walk, whatever the sizes say
        func find(_ path: ArraySlice<String>, from start: Int, to end: Int) -> Int? {
            var at = start
            while at + 8 <= end, boxes < 4096 {
                boxes += 1
                guard var length = big(at, 4) else { return nil }
                var header = 8
                if length == 1 {
                    guard let long = big(at + 8, 8) else { return nil }
                    (length, header) = (long, 16)
                } else if length == 0 {
                    length = end - at  // to the end of the file
                }
                guard length >= header else { return nil }
                if tag(at + 4, path.first!) {  // a box longer than the prefix is read as far as it goes
                    if path.count == 1 { return at + 4 }  // where the box's type is
                    let fullBox = path.first == "meta" ? 4 : 0  // version and flags before the children
                    return find(path.dropFirst(), from: at + header + fullBox, to: min(end, at + length))
                }
                guard length <= end - at else { return nil }  // what follows is past the prefix
                at += length
            }
            return nil
        }
        if let at = find(["meta", "iprp", "ipco", "ispe"], from: 0, to: bytes.count) {
            if let width = big(at + 8, 4), let height = big(at + 12, 4) { return (width, height) }
        } else if let at = find(["moov", "trak", "tkhd"], from: 0, to: bytes.count), at + 4 < bytes.count {
            let sizes = at + 4 + (bytes[at + 4] == 1 ? 88 : 76)
            if let width = big(sizes, 4), let height = big(sizes + 4, 4) { return (width >> 16, height >> 16) }
        }
        return nil
    }
}
