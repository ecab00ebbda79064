import ArgumentParser
import Foundation

/// Standard output and error, written with write(2). A write that fails (a full disk, a pipe
/// closed with SIGPIPE ignored) ends the command with exit 74 instead of trapping or going
/// unnoticed: a cron job whose output is lost must not look like one that succeeded.
package enum Output {
    /// Writes `text` and a line break to standard output; exit 74 when it cannot.
    package static func line(_ text: String) throws {
        try write(text + "\n")
    }

    /// Writes lines for a person: on a terminal each is cut (with "…") to the terminal's width,
    /// counted in the cells it draws, so none wraps and breaks a table; on a pipe as they are.
    package static func fitted(_ text: String) throws {
        guard Terminal.isInteractive else { return try line(text) }
        let width = Terminal.width
        try line(
            text.split(separator: "\n", omittingEmptySubsequences: false)
                .map { Terminal.truncate(String($0), toCells: width) }.joined(separator: "\n"))
    }

    /// Writes lines for a person that must be read whole (messages, hints, summaries): on a
    /// terminal each longer than its width wraps, under where its text starts; on a pipe as they
    /// are. Only a table's rows are cut (`fitted`).
    package static func wrapped(_ text: String) throws {
        guard Terminal.isInteractive else { return try line(text) }
        let width = Terminal.width
        try line(
            text.split(separator: "\n", omittingEmptySubsequences: false)
                .flatMap { Terminal.wrapHanging(String($0), width: width) }.joined(separator: "\n"))
    }

    /// Writes `text` as it is to standard output; exit 74 when it cannot.
    package static func write(_ text: String) throws {
        guard let failure = write(text, to: STDOUT_FILENO) else { return }
        complain("cannot write the output: \(String(cString: strerror(failure)))")
        throw ExitCode(Exit.ioError)
    }

    /// Writes `text` to standard output if it can, saying nothing when it cannot: for the progress
    /// line, whose loss the command's last write will notice.
    package static func attempt(_ text: String) {
        _ = write(text, to: STDOUT_FILENO)
    }

    /// Writes one line to standard error. When even that fails there is nowhere left to say
    /// anything: the process ends at once with exit 74 (`_exit`, which a killed pull also
    /// survives: every transaction is whole or absent).
    package static func error(_ text: String, newline: Bool = true) {
        if write(newline ? text + "\n" : text, to: STDERR_FILENO) != nil { _exit(Exit.ioError) }
    }

    /// The `errno` of a failed write, or nil when every byte was written.
    private static func write(_ text: String, to descriptor: Int32) -> Int32? {
        var text = text
        return text.withUTF8 { bytes -> Int32? in
            var offset = 0
            while offset < bytes.count {
                let written = Glibc.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
                if written < 0, errno == EINTR { continue }
                guard written > 0 else { return written < 0 ? errno : EIO }
                offset += written
            }
            return nil
        }
    }
}
