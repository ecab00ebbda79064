import FeedSyncDemoServer
import FeedSyncImages
import FeedSyncModel
import Foundation
import Testing

/// Cached pictures as pixels for the terminal: each kind decoded by Debian's libraries (our own
/// fixtures: 64 × 48, red, green / blue, white quarters), scaled to cover or fit a box; and
/// hostile files refused in a bounded time, never half drawn.
@Suite struct PictureDecoderTests {
    static let kinds = [
        "quad.png", "quad.jpg", "quad-progressive.jpg", "quad-cmyk.jpg", "quad.gif", "quad-interlaced.gif",
        "quad.webp", "quad-animated.webp",
    ]

    /// Whether `pixel` is `colour` give or take what JPEG's loss and the scaling's averages move.
    static func near(_ pixel: (UInt8, UInt8, UInt8, UInt8), _ colour: (Int, Int, Int)) -> Bool {
        abs(Int(pixel.0) - colour.0) < 48 && abs(Int(pixel.1) - colour.1) < 48 && abs(Int(pixel.2) - colour.2) < 48
            && pixel.3 == 255
    }

    @Test(arguments: kinds) func eachKindDecodesToItsQuartersAtTheBoxsSize(_ name: String) throws {
        let data = try fixture("pictures/" + name)
        // A thumbnail box of another shape: covered, the sides cut; the quarters keep their corners.
        let thumbnail = try PictureDecoder.decode(data, width: 20, height: 10, fill: true).get()
        #expect((thumbnail.width, thumbnail.height) == (20, 10))
        for (x, y, colour) in [
            (1, 1, (255, 0, 0)), (18, 1, (0, 255, 0)), (1, 8, (0, 0, 255)), (18, 8, (255, 255, 255)),
        ] {
            #expect(Self.near(thumbnail.pixel(x, y), colour), "\(name) at \(x),\(y): \(thumbnail.pixel(x, y))")
        }
        // Fitting: the picture's shape kept, never grown past its size.
        let fitted = try PictureDecoder.decode(data, width: 32, height: 100, fill: false).get()
        #expect((fitted.width, fitted.height) == (32, 24), "\(name)")
        let whole = try PictureDecoder.decode(data, width: 500, height: 500, fill: false).get()
        #expect((whole.width, whole.height) == (64, 48), "\(name)")
        #expect(Self.near(whole.pixel(63, 0), (0, 255, 0)) && Self.near(whole.pixel(0, 47), (0, 0, 255)), "\(name)")
    }

    /// A picture smaller than its box grows to cover it (the demo server's one-pixel pictures).
    @Test func aOnePixelPictureCoversItsBox() throws {
        let pixels = try PictureDecoder.decode(DemoServer.png(seed: 3), width: 8, height: 4, fill: true).get()
        #expect(pixels.rgba.count == 8 * 4 * 4)
        #expect(Set(stride(from: 0, to: pixels.rgba.count, by: 4).map { pixels.rgba[$0] }).count == 1)
    }

    /// Each kind damaged where a header check cannot see (cut short, bytes overwritten inside the
    /// data), claiming more pixels than allowed, or of a kind not shown: refused within
    /// milliseconds, with a reason, and never a picture half decoded.
    @Test(arguments: kinds) func damagedOrHugePicturesAreRefusedInABoundedTime(_ name: String) throws {
        let data = try fixture("pictures/" + name)
        var damaged: [(String, Data)] = [("cut short", data.prefix(data.count * 2 / 3))]
        var overwritten = data
        for at in stride(from: data.count / 2, to: data.count - 2, by: 3) { overwritten[at] = 0xFF }
        damaged.append(("overwritten", overwritten))
        for (what, bytes) in damaged {
            let started = ContinuousClock.now
            let result = PictureDecoder.decode(bytes, width: 40, height: 30, fill: true)
            #expect(ContinuousClock.now - started < .milliseconds(50), "\(name) \(what)")
            // An overwritten stretch some decoders cannot tell from pixels (GIF's and WebP's
            // lossless codes): what they give is whole and of the box's size, never a crash.
            switch result {
            case .success(let pixels):
                #expect(what != "cut short", "\(name) \(what) decoded")
                #expect(pixels.rgba.count == 40 * 30 * 4, "\(name) \(what)")
            case .failure(let failure): #expect(!failure.reason.isEmpty)
            }
        }
    }

    @Test func aHeaderClaimingTooManyPixelsIsRefusedBeforeDecoding() throws {
        var png = try fixture("pictures/quad.png")
        // IHDR's width and height (bytes 16...23): 20 000 × 20 000.
        png.replaceSubrange(16..<24, with: [0, 0, 0x4E, 0x20, 0, 0, 0x4E, 0x20])
        var gif = try fixture("pictures/quad.gif")
        gif.replaceSubrange(6..<10, with: [0x20, 0x4E, 0x20, 0x4E])
        for data in [png, gif] {
            let started = ContinuousClock.now
            let result = PictureDecoder.decode(data, width: 40, height: 30, fill: true)
            #expect(result.failure == PictureFailure(reason: "too many pixels"))
            #expect(ContinuousClock.now - started < .milliseconds(20))
        }
        let bmp = Data("BM".utf8) + Data(count: 60)
        #expect(PictureDecoder.decode(bmp, width: 4, height: 4, fill: true).failure != nil)
    }
}

extension Result {
    var failure: Failure? {
        if case .failure(let failure) = self { failure } else { nil }
    }
}
