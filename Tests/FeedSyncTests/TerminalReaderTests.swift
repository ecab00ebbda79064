import FeedSyncModel
import FeedSyncReader
import Foundation
import Testing

/// The terminal reader's pure parts: what the terminal's bytes mean (keys in their spellings,
/// the mouse, paste, answers to questions), which protocol the environment or the answers
/// choose, the frames written (only what changed), and the pictures' bytes and cells.
@Suite struct TerminalReaderTests {
    static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    @Test(arguments: [
        ("j", Input.key(.character("j"))),
        ("\u{1B}[A", .key(.up)), ("\u{1B}OB", .key(.down)), ("\u{1B}[1;5C", .key(.right)),
        ("\u{1B}[5~", .key(.pageUp)), ("\u{1B}[6~", .key(.pageDown)), ("\u{1B}[H", .key(.home)),
        ("\u{1B}[4~", .key(.end)), ("\u{1B}[Z", .key(.backTab)), ("\r", .key(.enter)), ("\u{7F}", .key(.backspace)),
        ("\u{03}", .key(.control(3))), ("é", .key(.character("é"))), ("\u{1B}j", .key(.character("j"))),
        ("\u{1B}[<64;10;5M", .key(.wheelUp)), ("\u{1B}[<65;10;5M", .key(.wheelDown)),
        ("\u{1B}[<0;10;5M", .key(.click(column: 9, row: 4))),
        ("\u{1B}[?62;4;22c", .reply(.attributes([62, 4, 22]))),
        ("\u{1B}_Gi=31;OK\u{1B}\\", .reply(.kitty(ok: true))),
        ("\u{1B}_Gi=31;ENOTSUPPORTED\u{1B}\\", .reply(.kitty(ok: false))),
        ("\u{1B}[6;16;8t", .reply(.cellSize(width: 8, height: 16))),
        ("\u{1B}P>|XTerm(390)\u{1B}\\", .reply(.version("XTerm(390)"))),
        ("\u{1B}]11;rgb:0000/0000/0000\u{07}", .reply(.other)),
        ("\u{1B}[200~rm -rf /\r\u{1B}[A\u{1B}[201~", .paste("rm -rf /\r\u{1B}[A")),
    ])
    func eachSpellingIsOneInput(text: String, expected: Input) {
        var parser = InputParser()
        #expect(parser.feed(Self.bytes(text)) == [expected])
        #expect(!parser.isWaiting)
    }

    @Test func aSequenceCutAnywhereWaitsForItsRestAndALoneEscapeIsTheKey() {
        let whole = Self.bytes("\u{1B}[<65;3;4M\u{1B}_Gi=31;OK\u{1B}\\\u{1B}[200~a\u{1B}[201~é")
        let expected: [Input] = [.key(.wheelDown), .reply(.kitty(ok: true)), .paste("a"), .key(.character("é"))]
        for cut in 1..<whole.count {
            var parser = InputParser()
            let got = parser.feed(whole[..<cut]) + parser.feed(whole[cut...])
            #expect(got == expected, "cut at \(cut)")
        }
        var parser = InputParser()
        #expect(parser.feed([0x1B]).isEmpty)
        #expect(parser.isWaiting)
        #expect(parser.flush() == [.key(.escape)])
        // A cut sequence flushed is dropped, never typed as keys.
        #expect(parser.feed(Self.bytes("\u{1B}[1;")).isEmpty)
        #expect(parser.flush().isEmpty)
        #expect(parser.feed(Self.bytes("q")) == [.key(.character("q"))])
    }

    @Test func endlessInputIsBounded() {
        var parser = InputParser()
        // An answer that never ends, then a paste that never ends: each dropped at the limit.
        _ = parser.feed([0x1B, 0x50] + Array(repeating: 0x41, count: 70_000))
        #expect(parser.feed(Self.bytes("\u{1B}\\q")).contains(.key(.character("q"))))
        _ = parser.feed(Self.bytes("\u{1B}[200~"))
        for _ in 0..<40 { _ = parser.feed(Array(repeating: 0x61, count: 4096)) }
        let end = parser.feed(Self.bytes("\u{1B}[201~"))
        guard case .paste(let text)? = end.first else {
            Issue.record("the paste ends: \(end)")
            return
        }
        #expect(text.utf8.count <= 1 << 16)
    }

    @Test func theEnvironmentNamesOnlyWhatItNamesForSure() {
        #expect(Detection.named(by: ["TERM": "xterm-kitty"]) == .kitty)
        #expect(Detection.named(by: ["TERM": "xterm-256color", "TERM_PROGRAM": "ghostty"]) == .kitty)
        #expect(Detection.named(by: ["TERM": "xterm-256color", "TERM_PROGRAM": "iTerm.app"]) == .iterm)
        #expect(Detection.named(by: ["TERM": "xterm-256color", "TERM_PROGRAM": "WezTerm"]) == .iterm)
        #expect(Detection.named(by: ["TERM": "foot"]) == .sixel)
        #expect(Detection.named(by: ["TERM": "dumb"]) == PictureProtocol.none)
        #expect(Detection.named(by: [:]) == PictureProtocol.none)
        // xterm may or may not draw sixel; inside tmux whatever is outside it must answer.
        #expect(Detection.named(by: ["TERM": "xterm-256color"]) == nil)
        #expect(
            Detection.named(by: ["TERM": "tmux-256color", "TMUX": "/tmp/t,1,0", "TERM_PROGRAM": "iTerm.app"]) == nil)
    }

    @Test func theAnswersChooseAndTmuxPassesOnlyKitty() throws {
        let kitty: [Reply] = [.kitty(ok: true), .attributes([62, 22])]
        let sixel: [Reply] = [.version("XTerm(390)"), .attributes([63, 1, 4, 22])]
        let plain: [Reply] = [.attributes([62, 22])]
        #expect(Detection.chosen(by: kitty, insideTmux: false) == .kitty)
        #expect(Detection.chosen(by: sixel, insideTmux: false) == .sixel)
        #expect(Detection.chosen(by: plain, insideTmux: false) == .blocks)
        #expect(Detection.chosen(by: [], insideTmux: false) == .blocks)
        #expect(Detection.chosen(by: kitty, insideTmux: true) == .kitty)
        #expect(Detection.chosen(by: sixel, insideTmux: true) == .blocks)
        // The questions end in DA1, which every terminal answers; inside tmux, passed through it
        // with every ESC doubled.
        let outside = String(decoding: Detection.questions(insideTmux: false), as: UTF8.self)
        #expect(outside.hasSuffix("\u{1B}[c"))
        let inside = String(decoding: Detection.questions(insideTmux: true), as: UTF8.self)
        #expect(inside.hasPrefix("\u{1B}Ptmux;\u{1B}\u{1B}_G") && inside.hasSuffix("\u{1B}\u{1B}[c\u{1B}\\"))
    }

    @Test func aFrameWritesOnlyWhatChanged() throws {
        var renderer = Renderer()
        var grid = Grid(width: 20, height: 3)
        grid.put("hello", row: 0, column: 0)
        grid.put("world", row: 2, column: 3, style: Style(bold: true))
        let first = String(decoding: renderer.frame(grid), as: UTF8.self)
        #expect(first.hasPrefix("\u{1B}[?2026h\u{1B}[0m\u{1B}[2J") && first.hasSuffix("\u{1B}[?2026l"))
        #expect(first.contains("hello") && first.contains("\u{1B}[0;1mworld"))
        #expect(renderer.frame(grid).isEmpty, "nothing changed, nothing written")
        grid.put("J", row: 0, column: 1)
        let second = String(decoding: renderer.frame(grid), as: UTF8.self)
        #expect(second == "\u{1B}[?2026h\u{1B}[1;2HJ\u{1B}[?2026l")
        // A wide character is one cell's text and a continuation; changing it rewrites from its start.
        grid.put("日本", row: 1, column: 0)
        #expect(grid[1, 1].text.isEmpty && grid[1, 0].text == "日")
        _ = renderer.frame(grid)
        grid.put("木", row: 1, column: 2)
        #expect(String(decoding: renderer.frame(grid), as: UTF8.self).contains("\u{1B}[2;3H木"))
        // A wide character that does not fit the row's end is left out, never cut.
        var narrow = Grid(width: 3, height: 1)
        #expect(narrow.put("ab日", row: 0, column: 0) == 2)
        // Protected cells are never written; dirty ones are, though unchanged.
        grid.put("XY", row: 2, column: 0)
        let protected = String(decoding: renderer.frame(grid, protected: [40, 41]), as: UTF8.self)
        #expect(!protected.contains("X") && !protected.contains("Y"))
        let dirty = String(decoding: renderer.frame(grid, dirty: [45]), as: UTF8.self)
        #expect(dirty.contains("\u{1B}[3;6H"))
        renderer.invalidate()
        #expect(String(decoding: renderer.frame(grid), as: UTF8.self).contains("\u{1B}[2J"))
    }

    static let red = Pixels(
        width: 4, height: 4, rgba: Array(repeating: [255, 0, 0, 255] as [UInt8], count: 16).flatMap { $0 })

    @Test func kittysPicturesAreSentOnceThenMovedAndDeletedByID() throws {
        var writer = GraphicsWriter(kind: .kitty)
        var sent = 0
        let placement = Placement(id: 7, row: 2, column: 1, columns: 6, rows: 2)
        let payload = try #require(GraphicsWriter.payload(Self.red, for: placement, kind: .kitty, insideTmux: false))
        let first = writer.update([placement], width: 80) { _ in
            sent += 1
            return payload
        }
        #expect(sent == 1 && first.protected.isEmpty)
        #expect(String(decoding: first.bytes, as: UTF8.self).hasPrefix("\u{1B}[3;2H\u{1B}_Ga=T,f=32,s=4,v=4,i=7,"))
        #expect(writer.update([placement], width: 80) { _ in payload }.bytes.isEmpty, "shown: nothing to send")
        var moved = placement
        moved.row = 5
        let move = String(decoding: writer.update([moved], width: 80) { _ in nil }.bytes, as: UTF8.self)
        #expect(move.contains("a=d,d=i,i=7,p=1") && move.contains("\u{1B}[6;2H\u{1B}_Ga=p,i=7,p=1,c=6,r=2"))
        let gone = String(decoding: writer.update([], width: 80) { _ in nil }.bytes, as: UTF8.self)
        #expect(gone.contains("a=d,d=i,i=7"))
        #expect(String(decoding: writer.farewell(), as: UTF8.self) == "\u{1B}_Ga=d,d=A,q=2\u{1B}\\")
    }

    @Test func aSixelPicturesCellsAreProtectedAndWrittenAgainWhenItGoes() throws {
        var writer = GraphicsWriter(kind: .sixel)
        let placement = Placement(id: 1, row: 1, column: 0, columns: 2, rows: 2)
        let payload = try #require(GraphicsWriter.payload(Self.red, for: placement, kind: .sixel, insideTmux: false))
        #expect(payload.starts(with: [0x1B, 0x50]) && payload.suffix(2) == [0x1B, 0x5C], "a DCS up to ST")
        let shown = writer.update([placement], width: 10) { _ in payload }
        #expect(shown.protected == [10, 11, 20, 21] && shown.dirty.isEmpty)
        let gone = writer.update([], width: 10) { _ in nil }
        #expect(gone.protected.isEmpty && gone.dirty == [10, 11, 20, 21] && gone.bytes.isEmpty)
        let iterm = try #require(GraphicsWriter.payload(Self.red, for: placement, kind: .iterm, insideTmux: false))
        #expect(String(decoding: iterm, as: UTF8.self).hasPrefix("\u{1B}]1337;File=inline=1;size="))
        #expect(iterm.last == 0x07)
        #expect(GraphicsWriter.payload(Self.red, for: placement, kind: .blocks, insideTmux: false) == nil)
    }

    @Test func halfBlocksAreTwoPixelsACell() {
        var rgba: [UInt8] = []
        for y in 0..<2 { for _ in 0..<2 { rgba += y == 0 ? [255, 0, 0, 255] : [0, 0, 255, 255] } }
        var grid = Grid(width: 4, height: 2)
        HalfBlocks.draw(Pixels(width: 2, height: 2, rgba: rgba), into: &grid, row: 1, column: 3)
        #expect(grid[1, 3].text == "▀")
        #expect(grid[1, 3].style.foreground == Colour(255, 0, 0) && grid[1, 3].style.background == Colour(0, 0, 255))
        #expect(grid[0, 3] == .blank, "nothing drawn outside the box or the grid")
    }
}
