import FeedSyncModel

/// Text its publisher encoded twice: UTF-8 bytes read as windows-1252 and written again as UTF-8,
/// so "Actualités" arrives as "ActualitÃ©s" and "£30" as "Â£30". feedparser and the readers
/// people use show the text meant; so does feedsync, but only where the repair is certain.
package enum Mojibake {
    /// `text` repaired when the whole of it is such text: every character is one windows-1252 has
    /// (or a C1 control, which a browser's windows-1252 decodes the five unassigned bytes to), and
    /// those bytes are valid UTF-8 holding at least one character beyond ASCII. Anything else —
    /// genuine "Ã" in Portuguese, a real "Â", text in any other script — is returned as it is.
    package static func repaired(_ text: String) -> String {
        text.containsUTF8(0xC3) ? repairedIfEncodedTwice(text) ?? text : text
    }

    /// `repaired` for text as UTF-8 bytes (an XML field as it was read).
    package static func repaired(_ bytes: [UInt8]) -> [UInt8] {
        guard bytes.withUnsafeBufferPointer({ $0.containsByte(0xC3) }),
            let fixed = repairedIfEncodedTwice(String(decoding: bytes, as: UTF8.self))
        else {
            return bytes
        }
        return Array(fixed.utf8)
    }

    /// The text `text` was before it was encoded twice, or nil when it was not. (Every
    /// double-encoded character starts with U+00C2…U+00F4, whose UTF-8 starts 0xC3: callers look
    /// for that byte first, one scan that most text ends at.)
    private static func repairedIfEncodedTwice(_ text: String) -> String? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        var beyondASCII = false
        var pending = 0  // continuation bytes the current sequence still needs
        for scalar in text.unicodeScalars {
            guard let byte = Windows1252.byte(of: scalar) else { return nil }
            // Checked as it goes, so text that is not mojibake is given up at its first accent.
            if pending > 0 {
                guard byte & 0xC0 == 0x80 else { return nil }
                pending -= 1
            } else if byte >= 0x80 {
                switch byte {
                case 0xC2...0xDF: pending = 1
                case 0xE0...0xEF: pending = 2
                case 0xF0...0xF4: pending = 3
                default: return nil
                }
                beyondASCII = true
            }
            bytes.append(byte)
        }
        guard pending == 0, beyondASCII else { return nil }
        return String(validating: bytes, as: UTF8.self)
    }
}

/// Windows-1252 as browsers decode it (the WHATWG Encoding Standard): ISO-8859-1 but for 0x80…0x9F,
/// where the five bytes it leaves unassigned decode to the C1 controls of their numbers.
package enum Windows1252 {
    /// What bytes 0x80…0x9F decode to (the five unassigned ones, the C1 control of the same number).
    private static let high: [Unicode.Scalar] = [
        "\u{20AC}", "\u{81}", "\u{201A}", "\u{192}", "\u{201E}", "\u{2026}", "\u{2020}", "\u{2021}",
        "\u{2C6}", "\u{2030}", "\u{160}", "\u{2039}", "\u{152}", "\u{8D}", "\u{17D}", "\u{8F}",
        "\u{90}", "\u{2018}", "\u{2019}", "\u{201C}", "\u{201D}", "\u{2022}", "\u{2013}", "\u{2014}",
        "\u{2DC}", "\u{2122}", "\u{161}", "\u{203A}", "\u{153}", "\u{9D}", "\u{17E}", "\u{178}",
    ]

    /// The character `byte` decodes to.
    package static func scalar(_ byte: UInt8) -> Unicode.Scalar {
        (0x80...0x9F).contains(byte) ? high[Int(byte) - 0x80] : Unicode.Scalar(byte)
    }

    /// `byte` decoded, as UTF-8.
    package static func utf8(_ byte: UInt8, into output: inout [UInt8]) {
        guard byte >= 0x80 else { return output.append(byte) }
        output += String(Character(scalar(byte))).utf8
    }

    /// The byte that decodes to `scalar`, or nil when none does.
    package static func byte(of scalar: Unicode.Scalar) -> UInt8? {
        let value = scalar.value
        if value < 0x80 || (0xA0...0xFF).contains(value) { return UInt8(value) }
        return high.firstIndex(of: scalar).map { UInt8(0x80 + $0) }
    }
}
