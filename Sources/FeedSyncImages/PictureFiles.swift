import CSystem
import Foundation

/// The picture folder: names come from the store's row id, never from a URL, so nothing a feed
/// says can place a file outside it or make two pictures collide.
public struct PictureFiles: Sendable {
    public let directory: String
    static let temporaryPrefix = ".tmp-"

    public init(directory: String) {
        self.directory = directory
    }

    /// `ab/1234.png`: spread over 256 sub-folders by id.
    public static func name(id: Int64, kind: ImageKind) -> String {
        let folder = String(UInt8(truncatingIfNeeded: id), radix: 16)
        return (folder.count == 1 ? "0" + folder : folder) + "/\(id).\(kind.fileExtension)"
    }

    public func path(_ name: String) -> String { directory + "/" + name }

    /// Writes `data` as `name`: a temp file in the same folder renamed over the name, so the name
    /// only ever holds a complete file. Not durable until `sync()`: callers mark pictures cached
    /// in the store only after it, one flush for many files.
    public func write(_ data: Data, as name: String) throws {
        let target = path(name)
        let slash = target.lastIndex(of: "/")!
        let folder = String(target[..<slash])
        let temporary = folder + "/" + Self.temporaryPrefix + target[target.index(after: slash)...]
        var fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        if fd < 0, errno == ENOENT {  // the folder's first picture
            if mkdir(folder, 0o755) != 0, errno == ENOENT {  // and the first of all
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            }
            fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        }
        guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        var failure: Int32 = 0
        data.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = Foundation.write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                if written <= 0 { failure = errno; return }
                offset += written
            }
        }
        close(fd)
        if failure == 0, rename(temporary, target) != 0 { failure = errno }
        if failure != 0 {
            unlink(temporary)
            throw POSIXError(POSIXErrorCode(rawValue: failure) ?? .EIO)
        }
    }

    /// Makes every file written so far durable, with their names: one `syncfs` of the folder's
    /// filesystem instead of an fsync per file and per folder (a third of a picture's cost).
    public func sync() throws {
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        defer { close(fd) }
        guard fs_syncfs(fd) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    }

    public func remove(_ name: String) {
        unlink(path(name))
    }

    /// Every file below the folder, as names relative to it.
    public func allFiles() -> [String] {
        guard let enumerator = FileManager.default.enumerator(atPath: directory) else { return [] }
        var names: [String] = []
        while let name = enumerator.nextObject() as? String {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: path(name), isDirectory: &isDirectory), !isDirectory.boolValue {
                names.append(name)
            }
        }
        return names
    }

    /// Removes temp files a killed process left behind; returns how many.
    @discardableResult
    public func sweepTemporaryFiles() -> Int {
        let leftovers = allFiles().filter { ($0 as NSString).lastPathComponent.hasPrefix(Self.temporaryPrefix) }
        leftovers.forEach(remove)
        return leftovers.count
    }
}
