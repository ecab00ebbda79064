import FeedSyncMarkup
import FeedSyncModel
import Foundation

// Which encoding a document is in, as browsers decide it (its bytes, its declaration, the
// Content-Type's charset), and the converter to UTF-8.

extension XMLInput {
    /// The converter to UTF-8 for a document that starts with `start`, or nil for UTF-8.
    static func converter(for start: [UInt8], contentType: String?) -> Converter? {
        let name = encodingName(start, contentType: contentType)
        guard let name, !["utf-8", "utf8"].contains(name) else {
            // Undeclared: UTF-8 if it is (a sequence cut at the chunk's end does not count against it).
            if name == nil, !isUTF8(start) { return Converter(from: "WINDOWS-1252") }
            return nil
        }
        if let converter = Converter(from: browserEncodings[name] ?? name.uppercased()) { return converter }
        // A name iconv does not know: as if undeclared.
        return isUTF8(start) ? nil : Converter(from: "WINDOWS-1252")
    }

    /// What browsers decode a label as (the WHATWG Encoding Standard), where that is not the
    /// encoding of its own name, as iconv calls it: a Thai feed that says TIS-620 writes
    /// windows-874's curly quotes, a "GB2312" one GBK's characters, and so on.
    static let browserEncodings: [String: String] = {
        let groups: [(String, [String])] = [
            (
                "WINDOWS-1252",
                [
                    "ansi_x3.4-1968", "ascii", "cp1252", "cp819", "csisolatin1", "ibm819", "iso-8859-1", "iso-ir-100",
                    "iso8859-1", "iso88591", "iso_8859-1", "iso_8859-1:1987", "l1", "latin1", "us-ascii",
                    "x-cp1252",
                ]
            ),
            ("WINDOWS-874", ["dos-874", "iso-8859-11", "iso8859-11", "iso885911", "tis-620"]),
            (
                "WINDOWS-1254",
                [
                    "cp1254", "csisolatin5", "iso-8859-9", "iso-ir-148", "iso8859-9", "iso88599", "iso_8859-9",
                    "iso_8859-9:1989", "l5", "latin5", "x-cp1254",
                ]
            ),
            (
                "GB18030",
                [
                    "chinese", "csgb2312", "csiso58gb231280", "gb2312", "gb_2312", "gb_2312-80", "gbk", "iso-ir-58",
                    "x-gbk",
                ]
            ),
            ("BIG5-HKSCS", ["big5", "cn-big5", "csbig5", "x-x-big5"]),
            (
                "CP949",
                [
                    "cseuckr", "csksc56011987", "euc-kr", "iso-ir-149", "korean", "ks_c_5601-1987", "ks_c_5601-1989",
                    "ksc5601", "ksc_5601", "windows-949",
                ]
            ),
            ("WINDOWS-31J", ["csshiftjis", "ms932", "ms_kanji", "shift-jis", "shift_jis", "sjis", "x-sjis"]),
        ]
        return Dictionary(uniqueKeysWithValues: groups.flatMap { name, labels in labels.map { ($0, name) } })
    }()

    /// The encoding the document names: by its byte-order mark (or UTF-16/32's telltale first
    /// bytes), the HTTP charset, or its XML declaration, lower-cased; nil when nothing names one.
    static func encodingName(_ start: [UInt8], contentType: String?) -> String? {
        let boms: [([UInt8], String)] = [
            ([0xEF, 0xBB, 0xBF], "utf-8"), ([0x00, 0x00, 0xFE, 0xFF], "utf-32be"),
            ([0xFF, 0xFE, 0x00, 0x00], "utf-32le"),
            ([0xFE, 0xFF], "utf-16be"), ([0xFF, 0xFE], "utf-16le"),
            ([0x00, 0x00, 0x00, 0x3C], "utf-32be"), ([0x3C, 0x00, 0x00, 0x00], "utf-32le"),
            ([0x00, 0x3C, 0x00, 0x3F], "utf-16be"), ([0x3C, 0x00, 0x3F, 0x00], "utf-16le"),
        ]
        for (bom, name) in boms where start.starts(with: bom) { return name }
        if let contentType, let charset = parameter("charset", in: contentType) { return charset }
        // The declaration, in an ASCII-compatible encoding: `<?xml version="1.0" encoding="…"?>`.
        let head = String(decoding: start.prefix(512), as: UTF8.self)
        guard let open = head.range(of: "<?xml"),
            let close = head.range(of: "?>", range: open.upperBound..<head.endIndex)
        else { return nil }
        return parameter("encoding", in: String(head[open.upperBound..<close.lowerBound]))
    }

    /// `name=value` or `name="value"` in `text`, lower-cased and unquoted.
    static func parameter(_ name: String, in text: String) -> String? {
        let lower = text.lowercased()
        guard let found = lower.range(of: name) else { return nil }
        var rest = lower[found.upperBound...].drop { $0 == " " || $0 == "\t" }
        guard rest.first == "=" else { return nil }
        rest = rest.dropFirst().drop { $0 == " " || $0 == "\t" }
        let quote = rest.first == "\"" || rest.first == "'" ? rest.first : nil
        if quote != nil { rest = rest.dropFirst() }
        let value = rest.prefix { $0 != quote && $0 != ";" && $0 != " " && $0 != "?" && !(quote == nil && $0 == ">") }
        return value.isEmpty ? nil : String(value)
    }

    /// Whether `bytes` is UTF-8, but for a sequence cut at its very end: where its whole
    /// characters end (`validUTF8Prefix`), the end comes before the length the next lead byte
    /// announces.
    static func isUTF8(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBufferPointer { buffer in
            let valid = validUTF8Prefix(buffer)
            guard valid < buffer.count else { return true }
            let lead = buffer[valid]
            let length =
                lead >> 5 == 0b110 ? 2 : lead >> 4 == 0b1110 ? 3 : lead >> 3 == 0b11110 && lead < 0xF5 ? 4 : 0
            return length > 0 && valid + length > buffer.count
        }
    }

    /// iconv from one encoding to UTF-8, across chunks: a sequence cut at a chunk's end waits for
    /// the next; a byte that is no character is U+FFFD. Windows-1252 is read by its table instead,
    /// as browsers read it: iconv has no character for its five unassigned bytes, which browsers
    /// read as the C1 controls of their numbers.
    final class Converter {
        private let descriptor: iconv_t?
        private var pending: [UInt8] = []
        /// Bytes of a code unit: a sequence that is no character is skipped a unit at a time, so
        /// UTF-16 and UTF-32 stay aligned after it.
        private let unit: Int

        init?(from encoding: String) {
            if ["WINDOWS-1252", "CP1252"].contains(encoding) {
                descriptor = nil
                unit = 1
                return
            }
            let descriptor = iconv_open("UTF-8", encoding)
            guard let descriptor, Int(bitPattern: descriptor) != -1 else { return nil }
            self.descriptor = descriptor
            unit = encoding.contains("32") ? 4 : encoding.contains("16") ? 2 : 1
        }

        deinit {
            if let descriptor { iconv_close(descriptor) }
        }

        func convert(_ bytes: [UInt8], last: Bool) -> [UInt8] {
            guard let descriptor else {
                var output: [UInt8] = []
                output.reserveCapacity(bytes.count + bytes.count / 8)
                for byte in bytes {
                    Windows1252.utf8(byte, into: &output)
                }
                return output
            }
            var input = pending + bytes
            pending = []
            var output = [UInt8](repeating: 0, count: input.count * 4 + 16)
            var produced = 0
            var consumed = 0
            while consumed < input.count {
                var inLeft = input.count - consumed
                var outLeft = output.count - produced
                let result = input.withUnsafeMutableBufferPointer { inBuffer in
                    output.withUnsafeMutableBufferPointer { outBuffer in
                        var inPointer: UnsafeMutablePointer<CChar>? = UnsafeMutableRawPointer(
                            inBuffer.baseAddress! + consumed
                        )
                        .assumingMemoryBound(to: CChar.self)
                        var outPointer: UnsafeMutablePointer<CChar>? = UnsafeMutableRawPointer(
                            outBuffer.baseAddress! + produced
                        )
                        .assumingMemoryBound(to: CChar.self)
                        return iconv(descriptor, &inPointer, &inLeft, &outPointer, &outLeft)
                    }
                }
                let failure = result == -1 ? errno : 0
                consumed = input.count - inLeft
                produced = output.count - outLeft
                if failure == EINVAL, !last {
                    pending = Array(input[consumed...])  // cut in two: the rest comes with the next chunk
                    break
                } else if failure == EILSEQ || failure == EINVAL {
                    output.replaceSubrange(produced..<min(output.count, produced + 3), with: [0xEF, 0xBF, 0xBD])
                    produced += 3
                    consumed = min(input.count, consumed + unit)
                } else if failure == E2BIG {
                    output += [UInt8](repeating: 0, count: input.count * 2 + 16)
                } else {
                    break
                }
            }
            input.removeAll()
            return Array(output[..<produced])
        }
    }
}
