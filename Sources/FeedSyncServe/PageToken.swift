import FeedSyncKit
import Foundation

/// The reading page's files in the data home: its token (`serve.token`), kept so the page's
/// address stays good from one start to the next, and the page that opens it (`open.html`), so
/// no token ever reaches a command line where every local user could read it. Both are written
/// only by `serve`, never through a link planted at their names (`O_EXCL`, `O_NOFOLLOW`, 0600).
public enum PageToken {
    /// The token kept in `home`: read when it is one (32 hexadecimal digits), made anew when
    /// there is none, it is not one, or `new`. `kept` is false when it could not be written: the
    /// address then holds until serve stops.
    public static func load(in home: DataHome, new: Bool) -> (token: String, kept: Bool, path: String) {
        let path = home.dataDirectory + "/serve.token"
        func valid(_ text: String) -> Bool {
            text.utf8.count == 32 && text.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
        }
        if !new {
            let fd = Glibc.open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
            if fd >= 0 {
                var buffer = [UInt8](repeating: 0, count: 64)
                let count = read(fd, &buffer, buffer.count)
                close(fd)
                let text = String(decoding: buffer.prefix(max(0, count)), as: UTF8.self)
                    .trimmingCharacters(in: .whitespacesAndNewlines)
                if valid(text) { return (text, true, path) }
            }
        }
        var bytes = SystemRandomNumberGenerator()
        let token = (0..<16).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &bytes)) }.joined()
        return (token, write(token + "\n", to: path), path)
    }

    /// Writes `open.html` in `home`, a page that goes to `address`; its path, nil when it could
    /// not be written.
    public static func opener(for address: String, in home: DataHome) -> String? {
        let path = home.dataDirectory + "/open.html"
        let page = "<!doctype html><meta http-equiv=\"refresh\" content=\"0;url=\(address)\">\n"
        return write(page, to: path) ? path : nil
    }

    /// Replaces the file at `path` with `text`, readable by its owner only; whether it could.
    private static func write(_ text: String, to path: String) -> Bool {
        unlink(path)
        let fd = Glibc.open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        return text.utf8CString.withUnsafeBufferPointer { Glibc.write(fd, $0.baseAddress, $0.count - 1) }
            == text.utf8.count
    }
}
