internal import CPictures
import FeedSyncModel
import Foundation

/// A cached picture as pixels of a given size, to show where a page cannot (a terminal): decoded
/// by Debian's libraries (CPictures), bounded before any pixel is decoded, then scaled by area.
public enum PictureDecoder {
    /// The most pixels a picture may have to be decoded: a camera's photo (6000 × 4000) passes; a
    /// header claiming more is refused before any pixel is decoded. JPEG and WebP scale while
    /// they decode, so a large one costs what its thumbnail does; PNG and GIF are decoded whole.
    static func maxPixels(_ kind: ImageKind) -> Int {
        kind == .jpeg || kind == .webp ? 24_000_000 : 8_000_000
    }

    /// The most bytes of a file read to decode it.
    public static let maxBytes = 32 << 20

    /// The picture `data` holds, scaled to `width` × `height` pixels: with `fill` it covers the
    /// whole box (a thumbnail: what overflows is cut, the middle kept), else it fits inside it
    /// (never larger than it is). Nil and why when it cannot be shown: not a kind decoded here
    /// (AVIF, HEIF, BMP), more than `maxPixels`, damaged anywhere (nothing half drawn).
    public static func decode(_ data: Data, width: Int, height: Int, fill: Bool) -> Result<Pixels, PictureFailure> {
        guard width > 0, height > 0, data.count <= maxBytes, let kind = ImageKind.sniff(data) else {
            return .failure(PictureFailure(reason: "not a picture this shows"))
        }
        let code: Int32
        switch kind {
        case .jpeg: code = Int32(FS_JPEG)
        case .png: code = Int32(FS_PNG)
        case .gif: code = Int32(FS_GIF)
        case .webp: code = Int32(FS_WEBP)
        default: return .failure(PictureFailure(reason: "\(kind.rawValue) pictures are not shown here"))
        }
        guard let size = ImageKind.dimensions(of: data, as: kind), size.width * size.height <= maxPixels(kind) else {
            return .failure(PictureFailure(reason: "too many pixels"))
        }
        let box = fitting(size, in: (width, height), fill: fill)
        var image = fs_image()
        var error = [CChar](repeating: 0, count: 200)
        let status = data.withUnsafeBytes { bytes in
            fs_picture_decode(
                code, bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count, Int32(box.scaled.width),
                Int32(box.scaled.height), Int64(maxPixels(kind)), &image, &error, error.count)
        }
        guard status == 0, let rgba = image.rgba else {
            let reason = error.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
            return .failure(PictureFailure(reason: reason))
        }
        defer { fs_image_free(&image) }
        let decoded = UnsafeBufferPointer(start: rgba, count: Int(image.width) * Int(image.height) * 4)
        return .success(
            resample(decoded, width: Int(image.width), height: Int(image.height), to: box.output, fill: fill))
    }

    /// The size a `size` picture is shown at in the box (`output`), and the least size it must be
    /// decoded at for that (`scaled`, the picture's shape kept).
    static func fitting(_ size: (width: Int, height: Int), in box: (Int, Int), fill: Bool) -> (
        output: (width: Int, height: Int), scaled: (width: Int, height: Int)
    ) {
        let across = Double(box.0) / Double(size.width)
        let down = Double(box.1) / Double(size.height)
        let scale = fill ? max(across, down) : min(across, down, 1)
        let scaled = (
            max(1, Int((Double(size.width) * scale).rounded(.up))),
            max(1, Int((Double(size.height) * scale).rounded(.up)))
        )
        return (fill ? box : (min(box.0, scaled.0), min(box.1, scaled.1)), scaled)
    }

    /// `source` scaled to `size` by averaging the pixels each output pixel covers (nearest when
    /// growing); with `fill`, the middle of a source that overflows the box's shape.
    static func resample(
        _ source: UnsafeBufferPointer<UInt8>, width: Int, height: Int, to size: (width: Int, height: Int), fill: Bool
    ) -> Pixels {
        // The part of the source shown: all of it, or with fill the middle at the box's shape.
        var part = (x: 0.0, y: 0.0, width: Double(width), height: Double(height))
        if fill {
            let shape = Double(size.width) / Double(size.height)
            if part.width / part.height > shape {
                part.width = part.height * shape
                part.x = (Double(width) - part.width) / 2
            } else {
                part.height = part.width / shape
                part.y = (Double(height) - part.height) / 2
            }
        }
        let stepX = part.width / Double(size.width)
        let stepY = part.height / Double(size.height)
        var output = [UInt8](repeating: 0, count: size.width * size.height * 4)
        for y in 0..<size.height {
            let top = min(height - 1, Int(part.y + Double(y) * stepY))
            let bottom = max(top + 1, min(height, Int(part.y + Double(y + 1) * stepY)))
            for x in 0..<size.width {
                let left = min(width - 1, Int(part.x + Double(x) * stepX))
                let right = max(left + 1, min(width, Int(part.x + Double(x + 1) * stepX)))
                var sums: (Int, Int, Int, Int) = (0, 0, 0, 0)
                for row in top..<bottom {
                    var at = (row * width + left) * 4
                    for _ in left..<right {
                        sums.0 += Int(source[at])
                        sums.1 += Int(source[at + 1])
                        sums.2 += Int(source[at + 2])
                        sums.3 += Int(source[at + 3])
                        at += 4
                    }
                }
                let count = (bottom - top) * (right - left)
                let out = (y * size.width + x) * 4
                output[out] = UInt8(sums.0 / count)
                output[out + 1] = UInt8(sums.1 / count)
                output[out + 2] = UInt8(sums.2 / count)
                output[out + 3] = UInt8(sums.3 / count)
            }
        }
        return Pixels(width: size.width, height: size.height, rgba: output)
    }
}
