import CFeedSyncSystem
import Foundation
import Synchronization

/// The picture folder: names come from the store's row id, never from a URL, so nothing a feed
/// says can place a file outside it or make two pictures collide. Nothing in it is reached through
/// a symbolic link: its sub-folders (and the folder itself, unless it is the user's own choice)
/// are opened with `O_NOFOLLOW` and files are created relative to them, so a link planted in the
/// folder cannot send a write or a removal elsewhere.
///
/// Several processes may write one folder (a pull, `serve`'s page fetches, `gc`): a temp file is
/// named by the process that writes it, which alone renames or removes it while it runs, and a
/// name is placed, recorded or removed together with its row only inside `exclusively`, so no row
/// names a missing file and no placed file stays without a row, however their work interleaves.
public struct PictureFiles: Sendable {
    public let directory: String
    /// The folder itself may be a link: it is the user's own (`XDG_CACHE_HOME`'s), not one inside
    /// the data home, where a link would have been planted.
    let folderMayBeLink: Bool
    static let temporaryPrefix = ".tmp-"
    /// The lock file `exclusively` holds, at the folder's top; never listed as a picture.
    static let lockName = ".lock"
    /// Numbers this process's temp files apart.

    /// The folder itself, opened once for this value and its copies: a pull writes thousands of
    /// pictures, each of which would open it twice (to write the temp file, to rename it).
    private let top = TopFolder()

    public init(directory: String, folderMayBeLink: Bool = false) {
        self.directory = directory
        self.folderMayBeLink = folderMayBeLink
    }

    /// An open folder, closed when the last `PictureFiles` holding it goes; opened again once it
    /// was removed (a long-running `serve` outlives a user's `rm -r` of the cache).
    private final class TopFolder: Sendable {
        private let fd = Mutex<Int32>(-1)

        func get(_ open: () throws -> Int32) throws -> Int32 {
            try fd.withLock { fd in
                var status = stat()
                if fd >= 0, fstat(fd, &status) != 0 || status.st_nlink == 0 {
                    close(fd)
                    fd = -1
                }
                if fd < 0 { fd = try open() }
                return fd
            }
        }

        deinit { fd.withLock { if $0 >= 0 { close($0) } } }
    }

    /// A write refused because a part of the picture folder's path is a symbolic link (or not a
    /// folder): a local fault for the user to look at, not a bad picture.
    public struct UnsafeFolder: Error, CustomStringConvertible {
        public var path: String
        public var description: String {
            "\(path) is a symbolic link or not a folder; feedsync writes no picture through it "
                + "(remove it, or set FEEDSYNC_HOME)"
        }
    }

    /// `ab/1234.png`: spread over 256 sub-folders by id.
    public static func name(id: Int64, kind: ImageKind) -> String {
        let folder = String(UInt8(truncatingIfNeeded: id), radix: 16)
        return (folder.count == 1 ? "0" + folder : folder) + "/\(id).\(kind.fileExtension)"
    }

    /// A name inside the folder (`ab/1234.png`, or a stray `file` at its top) split into its
    /// sub-folder and file; nil for anything else, so a name read from a damaged store cannot
    /// reach outside the folder.
    static func parts(of name: String) -> (folder: String?, file: String)? {
        let pieces = name.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard (1...2).contains(pieces.count), pieces.allSatisfy(isPlainName) else { return nil }
        return pieces.count == 2 ? (pieces[0], pieces[1]) : (nil, pieces[0])
    }

    /// A file or folder name of letters, digits, `.`, `-` and `_`, but `.` and `..`.
    private static func isPlainName(_ name: String) -> Bool {
        (1...128).contains(name.utf8.count) && name != "." && name != ".."
            && name.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "-"), UInt8(ascii: "_"):
                    true
                default: false
                }
            }
    }

    public func path(_ name: String) -> String { directory + "/" + name }

    /// A picture written to a temp file of this process's, not yet under its name.
    public struct Staged: Sendable {
        public let name: String
        let temporary: String
    }

    /// Writes `data` as `name` at once (`stage`, then `place`).
    public func write(_ data: Data, as name: String) throws {
        let staged = try stage(data, as: name)
        do {
            try place(staged)
        } catch {
            discard(staged)
            throw error
        }
    }

    /// Writes `data` to a temp file beside `name`, named by this process (`.tmp-PID-N-file`) so no
    /// other writer of the folder touches it; `place` then renames it over the name.
    public func stage(_ data: Data, as name: String) throws -> Staged {
        guard let (folderName, file) = Self.parts(of: name), let folderName else { throw POSIXError(.EINVAL) }
        let folder = try openFolder(folderName, create: true)
        defer { close(folder) }
        // Random, not counted: two stages of one name in this process never collide, with no
        // counter shared between tasks.
        let number = UInt64.random(in: 0...UInt64.max)
        let temporary = Self.temporaryPrefix + "\(getpid())-\(number)-" + file
        // O_EXCL: a name planted in the folder is never written through.
        let fd = openat(folder, temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        var failure: Int32 = 0
        data.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = Foundation.write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0, errno == EINTR { continue }
                if written <= 0 {
                    failure = written < 0 ? errno : EIO
                    return
                }
                offset += written
            }
        }
        close(fd)
        if failure != 0 {
            unlinkat(folder, temporary, 0)
            throw POSIXError(POSIXErrorCode(rawValue: failure) ?? .EIO)
        }
        return Staged(name: name, temporary: folderName + "/" + temporary)
    }

    /// Renames a staged picture over its name, so the name only ever holds a complete file. Not
    /// durable until `sync()`: callers mark pictures cached in the store only after it, one flush
    /// for many files, inside `exclusively`.
    public func place(_ staged: Staged) throws {
        guard let (folderName, file) = Self.parts(of: staged.name),
            let (_, temporary) = Self.parts(of: staged.temporary)
        else { throw POSIXError(.EINVAL) }
        let folder = try openFolder(folderName, create: false)
        defer { close(folder) }
        // A rename replaces a link at the name itself, never what it points to.
        guard renameat(folder, temporary, folder, file) == 0 else {
            throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
        }
    }

    /// Removes a staged picture that will not be placed.
    public func discard(_ staged: Staged) { remove(staged.temporary) }

    /// Runs `body` holding the folder's lock (an exclusive `flock` on `.lock` at its top), which
    /// every process's placing, recording, eviction and sweeping of pictures takes: what `body`
    /// does to files and rows together, no other writer sees half done. Held briefly. A folder
    /// that cannot be opened has no file to guard, and `body`'s own file work fails there. A lock
    /// another process holds is waited for on a thread of its own, not one of the task pool's.
    public func exclusively<T, E: Error>(_ body: () async throws(E) -> T) async throws(E) -> T {
        var fd: Int32 = -1
        if let top = try? openFolder(nil, create: true) {
            fd = openat(top, Self.lockName, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o644)
            close(top)
        }
        defer { if fd >= 0 { close(fd) } }  // which releases the lock
        if fd >= 0, flock(fd, LOCK_EX | LOCK_NB) != 0 {
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                Thread { [fd] in
                    while flock(fd, LOCK_EX) != 0, errno == EINTR {}
                    done.resume()
                }.start()
            }
        }
        return try await body()
    }

    /// The picture folder itself, or its sub-folder `name`, opened without following a link;
    /// created first when `create` and missing. The caller closes it.
    private func openFolder(_ name: String?, create: Bool) throws -> Int32 {
        let flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC
        let top = try self.top.get {
            let topFlags = folderMayBeLink ? flags & ~O_NOFOLLOW : flags
            var top = open(directory, topFlags)
            if top < 0, errno == ENOENT, create {
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
                top = open(directory, topFlags)
            }
            guard top >= 0 else { throw Self.refusal(errno, at: AT_FDCWD, directory) }
            return top
        }
        // The folder itself afresh, not a `dup`: that would share the listing's place with it.
        guard let name else {
            let again = openat(top, ".", flags)
            guard again >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
            return again
        }
        var folder = openat(top, name, flags)
        if folder < 0, errno == ENOENT, create {
            if mkdirat(top, name, 0o755) != 0, errno != EEXIST {
                throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
            }
            folder = openat(top, name, flags)
        }
        guard folder >= 0 else { throw Self.refusal(errno, at: top, name, shown: path(name)) }
        return folder
    }

    /// Why `name` in folder `at` did not open: `UnsafeFolder` when it is a symbolic link.
    private static func refusal(_ code: Int32, at folder: Int32, _ name: String, shown: String? = nil) -> any Error {
        var status = stat()
        if code == ELOOP
            || fstatat(folder, name, &status, AT_SYMLINK_NOFOLLOW) == 0 && status.st_mode & S_IFMT == S_IFLNK
        {
            return UnsafeFolder(path: shown ?? name)
        }
        return POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO)
    }

    /// Makes every file written so far durable, with their names: one `syncfs` of the folder's
    /// filesystem instead of an fsync per file and per folder (a third of a picture's cost).
    public func sync() throws {
        let fd = try openFolder(nil, create: false)
        defer { close(fd) }
        guard fs_syncfs(fd) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    }

    /// The bytes of the file `name` (at most `limit`), if it names a plain file inside the folder
    /// and no link leads there.
    public func read(_ name: String, limit: Int = 64 << 20) -> Data? {
        guard let (folderName, file) = Self.parts(of: name), let folder = try? openFolder(folderName, create: false)
        else { return nil }
        defer { close(folder) }
        let fd = openat(folder, file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0, status.st_mode & S_IFMT == S_IFREG, Int(status.st_size) <= limit else {
            return nil
        }
        var data = Data(count: Int(status.st_size))
        let read = data.withUnsafeMutableBytes { Foundation.read(fd, $0.baseAddress, $0.count) }
        return read == data.count ? data : nil
    }

    /// Removes the file `name`, if it names one inside the folder and no link leads there.
    public func remove(_ name: String) {
        guard let (folderName, file) = Self.parts(of: name),
            let folder = try? openFolder(folderName, create: false)
        else { return }
        unlinkat(folder, file, 0)
        close(folder)
    }

    /// Every file at the folder's top and in its sub-folders, as names relative to it. Links are
    /// listed (so `gc` can remove them), never followed.
    public func allFiles() -> [String] {
        guard let top = try? openFolder(nil, create: false) else { return [] }
        defer { close(top) }
        let entries = Self.entries(of: top)
        var names = entries.filter { ($0.type == DT_REG || $0.type == DT_LNK) && $0.name != Self.lockName }.map(\.name)
        for folder in entries where folder.type == DT_DIR {
            guard let sub = try? openFolder(folder.name, create: false) else { continue }
            for entry in Self.entries(of: sub) where entry.type == DT_REG || entry.type == DT_LNK {
                names.append(folder.name + "/" + entry.name)
            }
            close(sub)
        }
        return names
    }

    /// The entries of the open folder `fd` (which it leaves open), but `.` and `..`, with their types.
    private static func entries(of fd: Int32) -> [(name: String, type: Int32)] {
        let copy = dup(fd)
        guard copy >= 0, let stream = fdopendir(copy) else { return [] }
        defer { closedir(stream) }
        var found: [(String, Int32)] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) {
                String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard name != ".", name != ".." else { continue }
            var type = Int32(entry.pointee.d_type)
            if type == DT_UNKNOWN {  // some filesystems do not say: ask, without following a link
                var status = stat()
                guard fstatat(fd, name, &status, AT_SYMLINK_NOFOLLOW) == 0 else { continue }
                switch status.st_mode & S_IFMT {
                case S_IFDIR: type = Int32(DT_DIR)
                case S_IFREG: type = Int32(DT_REG)
                case S_IFLNK: type = Int32(DT_LNK)
                default: continue
                }
            }
            found.append((name, type))
        }
        return found
    }

    /// The size of the plain file `name` inside the folder, nil when there is none (or a link).
    public func size(of name: String) -> Int64? {
        guard let (folderName, file) = Self.parts(of: name), let folder = try? openFolder(folderName, create: false)
        else { return nil }
        defer { close(folder) }
        var status = stat()
        guard fstatat(folder, file, &status, AT_SYMLINK_NOFOLLOW) == 0, status.st_mode & S_IFMT == S_IFREG else {
            return nil
        }
        return Int64(status.st_size)
    }

    /// A temp file's name (`ab/.tmp-PID-N-1234.png`): a writer's, not a picture.
    public static func isTemporary(_ name: String) -> Bool {
        (name as NSString).lastPathComponent.hasPrefix(temporaryPrefix)
    }

    /// Removes the temp files of processes that ended (killed mid-write) and of no process;
    /// returns how many. A running process's temp files are its own to place or remove.
    @discardableResult
    public func sweepTemporaryFiles() -> Int {
        let leftovers = allFiles().filter(isLeftover)
        leftovers.forEach(remove)
        return leftovers.count
    }

    /// A temp file of a process that ended, or of none.
    public func isLeftover(_ name: String) -> Bool {
        let file = (name as NSString).lastPathComponent
        guard file.hasPrefix(Self.temporaryPrefix) else { return false }
        let writer = file.dropFirst(Self.temporaryPrefix.count).prefix { $0 != "-" }
        guard let pid = pid_t(writer), pid > 0 else { return true }
        return kill(pid, 0) != 0 && errno == ESRCH
    }
}
