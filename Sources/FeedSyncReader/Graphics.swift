internal import CPictures
import FeedSyncKit
import Foundation

/// How pictures reach the terminal.
package enum PictureProtocol: String, CaseIterable, Sendable {
    /// kitty's graphics protocol (kitty, Ghostty, Konsole, WezTerm): pixels sent once, placed
    /// and moved by id, drawn above the text.
    case kitty
    /// iTerm2's inline images (iTerm2, WezTerm, mintty, VS Code): a PNG drawn into the cells.
    case iterm
    /// DEC sixel (xterm -ti vt340, foot, mlterm, Windows Terminal): drawn into the cells.
    case sixel
    /// Unicode half blocks in 24-bit colour: two pixels a cell, for any other terminal.
    case blocks
    /// No pictures: the boxes stay empty.
    case none
}

/// Finding out what the terminal shows, without guessing wrong: the environment where it names
/// the terminal for sure, else one batch of questions ending in DA1 (every terminal answers it;
/// an answer to the kitty query before it means kitty's protocol, a 4 in it sixel), within a
/// bounded time. Inside tmux only what passes through it counts: the questions go through
/// (passthrough), and only kitty's protocol is used through it (tmux erases a sixel or an iTerm2
/// picture at its next redraw); else half blocks.
package enum Detection {
    /// The protocol the environment names for sure, nil when the terminal must be asked.
    package static func named(by environment: [String: String]) -> PictureProtocol? {
        let term = environment["TERM"] ?? ""
        let program = environment["TERM_PROGRAM"] ?? ""
        if term == "dumb" || term.isEmpty { return PictureProtocol.none }
        if environment["TMUX"] != nil { return nil }
        if term == "xterm-kitty" || environment["KITTY_WINDOW_ID"] != nil || term == "xterm-ghostty"
            || program == "ghostty"
        {
            return .kitty
        }
        if ["iTerm.app", "WezTerm", "mintty", "vscode"].contains(program) || environment["LC_TERMINAL"] == "iTerm2" {
            return .iterm
        }
        if term.hasPrefix("foot") || environment["WT_SESSION"] != nil { return .sixel }
        return nil
    }

    /// The questions: XTVERSION, the kitty query (image 31, one pixel, stored nowhere), the
    /// cell's size in pixels, then DA1. Inside tmux, wrapped to reach the terminal outside.
    package static func questions(insideTmux: Bool) -> [UInt8] {
        let kitty = "\u{1B}_Gi=31,s=1,v=1,a=q,t=d,f=24;AAAA\u{1B}\\"
        guard insideTmux else { return Array("\u{1B}[>0q\(kitty)\u{1B}[16t\u{1B}[c".utf8) }
        return Tmux.wrap(Array((kitty + "\u{1B}[16t\u{1B}[c").utf8))
    }

    /// The protocol the answers mean (nil: no DA1 came: inside tmux, passthrough is off).
    package static func chosen(by replies: [Reply], insideTmux: Bool) -> PictureProtocol {
        if replies.contains(.kitty(ok: true)) { return .kitty }
        if insideTmux { return .blocks }
        for case .attributes(let attributes) in replies where attributes.dropFirst().contains(4) { return .sixel }
        return .blocks
    }
}

/// Sequences for the terminal outside tmux: `ESC P tmux ; … ESC \`, every ESC inside doubled.
enum Tmux {
    static func wrap(_ bytes: [UInt8]) -> [UInt8] {
        Array("\u{1B}Ptmux;".utf8) + bytes.flatMap { $0 == 0x1B ? [0x1B, 0x1B] : [$0] } + Array("\u{1B}\\".utf8)
    }
}

/// A picture on screen: its pixels in a box of cells.
package struct Placement: Equatable, Sendable {
    /// Which picture (one id for one picture at one size).
    package var id: UInt32
    package var row: Int
    package var column: Int
    package var columns: Int
    package var rows: Int
    package init(id: UInt32, row: Int, column: Int, columns: Int, rows: Int) {
        (self.id, self.row, self.column, self.columns, self.rows) = (id, row, column, columns, rows)
    }
}

/// What the terminal shows of pictures, and the bytes that change it: kitty's are sent once and
/// moved by placement; sixel and iTerm2 pictures are drawn into the cells, so the cells under one
/// on screen are left alone by the text (`protected`) and written again when it goes (`dirty`).
package struct GraphicsWriter {
    package let kind: PictureProtocol
    let insideTmux: Bool
    private var shown: [UInt32: Placement] = [:]
    /// kitty: the pictures the terminal holds, oldest first (at most `kept`).
    private var sent: [UInt32] = []
    static let kept = 256

    package init(kind: PictureProtocol, insideTmux: Bool = false) {
        self.kind = kind
        self.insideTmux = insideTmux
    }

    /// The terminal shows nothing of ours any more (a cleared screen).
    package mutating func forget() {
        shown = [:]
    }

    /// Bytes that make the screen show `wanted`: each picture's encoded payload from `payload`
    /// (nil: not ready, left out). With the cells of `width` the grid has: the cells under
    /// pictures to leave alone, and the cells pictures left.
    package mutating func update(
        _ wanted: [Placement], width: Int, payload: (Placement) -> [UInt8]?
    ) -> (bytes: [UInt8], protected: Set<Int>, dirty: Set<Int>) {
        var bytes: [UInt8] = []
        var dirty: Set<Int> = []
        var protected: Set<Int> = []
        let wantedByID = Dictionary(wanted.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        for (id, old) in shown where wantedByID[id] != old {
            if kind == .kitty {
                bytes += command("a=d,d=i,i=\(id),p=1,q=2")
            } else {
                dirty.formUnion(Self.cells(of: old, width: width))
            }
            shown[id] = nil
        }
        for placement in wanted where shown[placement.id] != placement {
            let move = Array("\u{1B}[\(placement.row + 1);\(placement.column + 1)H".utf8)
            if kind == .kitty, sent.contains(placement.id) {
                bytes += move + command("a=p,i=\(placement.id),p=1,c=\(placement.columns),r=\(placement.rows),C=1,q=2")
            } else {
                guard let data = payload(placement) else { continue }
                bytes += move + data
                if kind == .kitty { remember(placement.id, &bytes) }
            }
            shown[placement.id] = placement
        }
        if kind != .kitty {
            for placement in shown.values { protected.formUnion(Self.cells(of: placement, width: width)) }
            dirty.subtract(protected)
        }
        return (bytes, protected, dirty)
    }

    /// Notes that kitty holds `id`, and frees the oldest beyond `kept`.
    private mutating func remember(_ id: UInt32, _ bytes: inout [UInt8]) {
        sent.append(id)
        while sent.count > Self.kept {
            let oldest = sent.removeFirst()
            bytes += command("a=d,d=I,i=\(oldest),q=2")
        }
    }

    /// What ends the session: kitty frees our pictures.
    package func farewell() -> [UInt8] { kind == .kitty ? command("a=d,d=A,q=2") : [] }

    private func command(_ keys: String) -> [UInt8] { Self.command(keys, insideTmux: insideTmux) }

    static func command(_ keys: String, _ payload: String = "", insideTmux: Bool) -> [UInt8] {
        let bytes = Array("\u{1B}_G\(keys)\(payload.isEmpty ? "" : ";" + payload)\u{1B}\\".utf8)
        return insideTmux ? Tmux.wrap(bytes) : bytes
    }

    static func cells(of placement: Placement, width: Int) -> [Int] {
        (placement.row..<placement.row + placement.rows).flatMap { row in
            (placement.column..<min(width, placement.column + placement.columns)).map { row * width + $0 }
        }
    }

    /// `pixels` as the protocol sends them for `placement`'s box: kitty's RGBA in chunks of
    /// 4096 base64 characters (transmitted and shown at once, the cursor not moved, no answer),
    /// iTerm2's PNG, sixel's DCS. Nil when the picture cannot be encoded.
    package static func payload(_ pixels: Pixels, for placement: Placement, kind: PictureProtocol, insideTmux: Bool)
        -> [UInt8]?
    {
        switch kind {
        case .kitty:
            let encoded = Data(pixels.rgba).base64EncodedString()
            var out: [UInt8] = []
            var start = encoded.startIndex
            var first = true
            while start < encoded.endIndex {
                let end = encoded.index(start, offsetBy: 4096, limitedBy: encoded.endIndex) ?? encoded.endIndex
                let more = end < encoded.endIndex ? 1 : 0
                let keys =
                    first
                    ? "a=T,f=32,s=\(pixels.width),v=\(pixels.height),i=\(placement.id),p=1,c=\(placement.columns),"
                        + "r=\(placement.rows),C=1,q=2,m=\(more)"
                    : "m=\(more)"
                out += command(keys, String(encoded[start..<end]), insideTmux: insideTmux)
                first = false
                start = end
            }
            return out
        case .iterm:
            guard let png = Self.encode(pixels, with: fs_png_encode) else { return nil }
            let header =
                "\u{1B}]1337;File=inline=1;size=\(png.count);width=\(placement.columns);height=\(placement.rows);"
                + "preserveAspectRatio=0:"
            return Array(header.utf8) + Array(Data(png).base64EncodedString().utf8) + [0x07]
        case .sixel:
            return Self.encode(pixels, with: fs_sixel_encode)
        case .blocks, .none:
            return nil
        }
    }

    static func encode(
        _ pixels: Pixels,
        with encoder: (
            UnsafePointer<fs_image>?, UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>?, UnsafeMutablePointer<Int>?
        ) -> Int32
    ) -> [UInt8]? {
        var rgba = pixels.rgba
        return rgba.withUnsafeMutableBufferPointer { buffer -> [UInt8]? in
            var image = fs_image(rgba: buffer.baseAddress, width: Int32(pixels.width), height: Int32(pixels.height))
            var out: UnsafeMutablePointer<UInt8>?
            var size = 0
            guard encoder(&image, &out, &size) == 0, let out else { return nil }
            defer { free(out) }
            return Array(UnsafeBufferPointer(start: out, count: size))
        }
    }

    /// Whether the protocol's library is there (libpng for iTerm2, libsixel for sixel): the
    /// sentence saying what is missing, else nil.
    package static func missing(for kind: PictureProtocol) -> String? {
        let library: Int32
        switch kind {
        case .iterm: library = Int32(FS_PNG)
        case .sixel: library = Int32(FS_SIXEL)
        default: return nil
        }
        return fs_picture_load(library).map { String(cString: $0) }
    }
}

/// A picture as half blocks: each cell the upper half block (▀) in the top pixel's colour over
/// the bottom one's. `pixels` is `columns` × 2·`rows`.
package enum HalfBlocks {
    package static func draw(_ pixels: Pixels, into grid: inout Grid, row: Int, column: Int) {
        for y in 0..<pixels.height / 2 {
            for x in 0..<pixels.width where row + y < grid.height && column + x < grid.width {
                let top = pixels.pixel(x, 2 * y)
                let bottom = pixels.pixel(x, 2 * y + 1)
                grid[row + y, column + x] = Cell(
                    text: "▀",
                    style: Style(
                        foreground: Colour(top.0, top.1, top.2), background: Colour(bottom.0, bottom.1, bottom.2)))
            }
        }
    }
}
