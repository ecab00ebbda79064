import ArgumentParser
import Foundation

/// What a command asks of its user beyond its arguments: the command meant by a word that is
/// none, an account's password.
package enum Asking {
    /// What to say when the first word is no command (the parser says only "Unexpected argument"):
    /// the nearest command when one is near (`pul`: `pull`), else the list; nil for a command,
    /// an option, or a word a command's arguments may hold after one.
    package static func unknownCommand(_ arguments: [String], names: [String]) -> String? {
        var words = arguments[...]
        while let first = words.first, first == "--home" {  // the one option taken before a command
            words = words.dropFirst(2)
        }
        // `help WORD` asks of a command too.
        if words.first == "help", words.count > 1 { words = words.dropFirst() }
        guard let word = words.first, !word.hasPrefix("-") else { return nil }
        guard !names.contains(word) else { return nil }
        func distance(_ a: String, _ b: String) -> Int {
            let (a, b) = (Array(a), Array(b))
            var row = Array(0...b.count)
            for i in 1...max(a.count, 1) where !a.isEmpty {
                var previous = row[0]
                row[0] = i
                for j in 1...max(b.count, 1) where !b.isEmpty {
                    let current = row[j]
                    row[j] = min(row[j] + 1, row[j - 1] + 1, previous + (a[i - 1] == b[j - 1] ? 0 : 1))
                    previous = current
                }
            }
            return row[b.count]
        }
        let nearest = names.map { ($0, distance(word.lowercased(), $0)) }.min { $0.1 < $1.1 }
        if let (name, far) = nearest, far <= 2 {
            return "unknown command '\(word)'; did you mean 'feedsync \(name)'?"
        }
        return "unknown command '\(word)'; the commands: \(names.joined(separator: ", "))"
    }

    /// The password: FEEDSYNC_PASSWORD, else the file's first line, else asked for on the
    /// terminal without echo. Never an argument.
    package static func password(file: String?) throws -> String {
        if let file {
            let fd = open(file, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else {
                complain("cannot read the password file \(file): \(String(cString: strerror(errno)))")
                throw ExitCode(Exit.ioError)
            }
            defer { close(fd) }
            var bytes = [UInt8](repeating: 0, count: 4096)
            let count = read(fd, &bytes, bytes.count)
            let line =
                String(decoding: bytes.prefix(max(0, count)), as: UTF8.self)
                .split(separator: "\n", omittingEmptySubsequences: false).first.map(String.init) ?? ""
            guard !line.isEmpty else {
                complain("the password file \(file) is empty")
                throw ExitCode(Exit.usage)
            }
            return line
        }
        if let password = ProcessInfo.processInfo.environment["FEEDSYNC_PASSWORD"], !password.isEmpty {
            return password
        }
        guard isatty(0) == 1 else {
            complain("no password: set FEEDSYNC_PASSWORD or give --password-file (no terminal to ask on)")
            throw ExitCode(Exit.usage)
        }
        Output.error("password: ", newline: false)
        var settings = termios()
        tcgetattr(0, &settings)
        var quiet = settings
        quiet.c_lflag &= ~tcflag_t(ECHO)
        tcsetattr(0, TCSANOW, &quiet)
        defer {
            tcsetattr(0, TCSANOW, &settings)
            Output.error("")
        }
        guard let line = readLine(strippingNewline: true), !line.isEmpty else {
            complain("no password given")
            throw ExitCode(Exit.usage)
        }
        return line
    }
}
