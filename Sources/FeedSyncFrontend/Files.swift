import ArgumentParser
import Foundation

/// The files a command reads and writes besides the data home's: what it is given (`-` is
/// standard input), what it is asked to write (never through a link planted at the name).
package enum Files {
    /// The bytes of `file` (`-`: standard input), at most `maxBytes`; a file that cannot be read
    /// is exit 74, one longer than that (no `what` is) exit 65, each with its sentence.
    package static func read(_ file: String, maxBytes: Int, what: String) throws -> Data {
        let handle = file == "-" ? FileHandle.standardInput : FileHandle(forReadingAtPath: file)
        guard let handle else {
            complain("cannot read \(file): \(String(cString: strerror(errno)))")
            throw ExitCode(Exit.ioError)
        }
        let data: Data
        do {
            data = try handle.read(upToCount: maxBytes + 1) ?? Data()
        } catch {
            complain("cannot read \(file): \(error.localizedDescription)")
            throw ExitCode(Exit.ioError)
        }
        guard data.count <= maxBytes else {
            complain("\(file) is larger than \(maxBytes >> 20) MB; no \(what) is")
            throw ExitCode(Exit.dataError)
        }
        return data
    }

    /// Writes `text` to `file`, replacing it, and flushes it: never through a symbolic link
    /// planted at the name (`O_NOFOLLOW`). Exit 74 with its sentence when it cannot.
    package static func write(_ text: String, to file: String) throws {
        let descriptor = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            complain("cannot write \(file): \(String(cString: strerror(errno)))")
            throw ExitCode(Exit.ioError)
        }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        do {
            try handle.write(contentsOf: Data(text.utf8))
            try handle.synchronize()
        } catch {
            complain("cannot write \(file): \(error.localizedDescription)")
            throw ExitCode(Exit.ioError)
        }
    }
}
