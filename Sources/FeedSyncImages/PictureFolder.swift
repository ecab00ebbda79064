import CFeedSyncSystem
import FeedSyncModel
import Foundation
import Synchronization

/// The picture folder's files, for `PictureCache` alone. Names come from the store's row id, never
/// from a URL, so nothing a feed says can place a file outside the folder or make two pictures
/// collide. Nothing in it is reached through a symbolic link: its sub-folders (and the folder
/// itself, unless it is the user's own choice) are opened with `O_NOFOLLOW`, once each, and kept
/// open; files are made and named relative to them, so a link planted in the folder cannot send a
/// write or a removal elsewhere, and a picture costs no lookup of its path.
///
/// A picture is written to a file with no name (`O_TMPFILE`) and named (`link`) only once whole,
/// so a name never holds part of a picture, even after a crash. Where the file system has no such
/// files, a temp name of the writing process's (`.tmp-PID-N-file`) and a rename do the same.
/// Nothing is flushed: `PictureCache` records each file's size and hash and checks them on read.
final class PictureFolder: Sendable {
    let directory: String
    /// The folder itself may be a link: it is the user's own (`XDG_CACHE_HOME`'s), not one inside
    /// the data home, where a link would have been planted.
    let folderMayBeLink: Bool
    static let temporaryPrefix = ".tmp-"
    /// The lock file `exclusively` holds, at the folder's top; never listed as a picture.
    static let lockName = ".lock"

    /// The open folders: the 256 sub-folders by number, then the folder itself (-1: not open).
    /// Folders `reopen` let go stay open until this value goes: a descriptor another task may be
    /// using is never closed under it (only removed folders are let go).
    private let open = Mutex<(folders: [Int32], retired: [Int32])>((Array(repeating: -1, count: 257), []))
    private static let top = 256

    init(directory: String, folderMayBeLink: Bool = false) {
        self.directory = directory
        self.folderMayBeLink = folderMayBeLink
    }

    deinit {
        open.withLock { open in
            for fd in open.folders + open.retired where fd >= 0 { close(fd) }
        }
    }

    /// A write refused because a part of the picture folder's path is a symbolic link (or not a
    /// folder): a local fault for the user to look at, not a bad picture.
    struct UnsafeFolder: Error, CustomStringConvertible {
        var path: String
        var description: String {
            "\(path) is a symbolic link or not a folder; feedsync writes no picture through it "
                + "(remove it, or set FEEDSYNC_HOME)"
        }
    }

    /// `ab/1234.png`: spread over 256 sub-folders by id.
    static func name(id: Int64, kind: ImageKind) -> String {
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

    func path(_ name: String) -> String { directory + "/" + name }

    // MARK: Writing

    /// A picture's bytes in a file that has no name yet (or a temp name of this process's), until
    /// `name` gives it one. Closed (and a temp name removed) when the value goes unnamed.
    final class Unnamed: Sendable {
        let fd: Int32
        /// The sub-folder it is to be named in.
        let folder: String
        /// Where the file system has no nameless files: its temp name in `folder`.
        let temporary: String?
        private let owner: PictureFolder

        fileprivate init(fd: Int32, folder: String, temporary: String?, owner: PictureFolder) {
            self.fd = fd
            self.folder = folder
            self.temporary = temporary
            self.owner = owner
        }

        deinit {
            close(fd)
            // Once named, the temp name is gone and this removes nothing (no other writer uses it).
            if let temporary { owner.remove(folder + "/" + temporary) }
        }
    }

    /// Writes `data` to a nameless file in the sub-folder of `name` (made if missing).
    func write(_ data: Data, for name: String) throws -> Unnamed {
        guard let (folderName, file) = Self.parts(of: name), let folderName else { throw POSIXError(.EINVAL) }
        let (fd, temporary) = try retryingOnce { () throws -> (Int32, String?) in
            let folder = try self.folder(folderName, create: true)
            let fd = fs_open_tmpfile(folder, 0o644)
            if fd >= 0 { return (fd, nil) }
            guard [EOPNOTSUPP, EISDIR, EINVAL].contains(errno) else { throw Self.error(errno) }
            // Random, not counted: two writes of one name in this process never collide, with no
            // counter shared between tasks. O_EXCL: a name planted in the folder is never written through.
            let temporary = Self.temporaryPrefix + "\(getpid())-\(UInt64.random(in: 0...UInt64.max))-" + file
            let named = openat(folder, temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
            guard named >= 0 else { throw Self.error(errno) }
            return (named, temporary)
        }
        let unnamed = Unnamed(fd: fd, folder: folderName, temporary: temporary, owner: self)
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
        if failure != 0 { throw Self.error(failure) }
        return unnamed
    }

    /// Gives a written file its name, replacing a file of that name (a picture fetched again).
    /// Call inside `exclusively`.
    func name(_ unnamed: Unnamed, as name: String) throws {
        guard let (folderName, file) = Self.parts(of: name), folderName == unnamed.folder else {
            throw POSIXError(.EINVAL)
        }
        try retryingOnce {
            let folder = try self.folder(folderName, create: true)
            if let temporary = unnamed.temporary {
                // A rename replaces a link at the name itself, never what it points to.
                guard renameat(folder, temporary, folder, file) == 0 else { throw Self.error(errno) }
            } else if fs_link_open_file(unnamed.fd, folder, file) != 0 {
                guard errno == EEXIST, unlinkat(folder, file, 0) == 0 || errno == ENOENT,
                    fs_link_open_file(unnamed.fd, folder, file) == 0
                else { throw Self.error(errno) }
            }
        }
    }

    /// Runs `body` once more, with the folders opened afresh, when it fails with ENOENT: the
    /// folder was removed (a user's `rm -r` of the cache under a long-running `serve`).
    private func retryingOnce<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as POSIXError where error.code == .ENOENT {
            reopen()
            return try body()
        }
    }

    /// Lets go of the open folders that were removed since they were opened: the next use opens
    /// them again by path. Only those, so however often it is called, no more descriptors stay
    /// retired than folders were removed.
    func reopen() {
        open.withLock { open in
            for index in open.folders.indices where open.folders[index] >= 0 {
                var status = stat()
                guard fstat(open.folders[index], &status) != 0 || status.st_nlink == 0 else { continue }
                open.retired.append(open.folders[index])
                open.folders[index] = -1
            }
        }
    }

    private static func error(_ code: Int32) -> POSIXError { POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO) }

    // MARK: The lock

    /// Runs `body` holding the folder's lock (an exclusive `flock` on `.lock` at its top), which
    /// every process's naming, recording, eviction and sweeping of pictures takes: what `body`
    /// does to files and rows together, no other writer sees half done. Held briefly. A folder
    /// that cannot be opened has no file to guard, and `body`'s own file work fails there. A lock
    /// another process holds is waited for on a thread of its own, not one of the task pool's.
    func exclusively<T, E: Error>(_ body: () async throws(E) -> T) async throws(E) -> T {
        var fd: Int32 = -1
        if let top = try? folder(nil, create: true) {
            fd = openat(top, Self.lockName, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o644)
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

    // MARK: Folders

    /// The folder itself (nil), or its sub-folder `name`, opened without following a link and
    /// kept open; created first when `create` and missing. Not to be closed: a name that is not
    /// one of the 256 sub-folders' (`gc` listing a stray folder) goes through `withFolder`.
    private func folder(_ name: String?, create: Bool) throws -> Int32 {
        guard let index = name.map(Self.index(of:)) ?? Self.top else { throw POSIXError(.EINVAL) }
        if let fd = open.withLock({ $0.folders[index] >= 0 ? $0.folders[index] : nil }) { return fd }
        let fd = try name.map { try openFolder($0, create: create) } ?? openTop(create: create)
        return open.withLock { open in
            if open.folders[index] >= 0 {  // another task opened it meanwhile
                close(fd)
                return open.folders[index]
            }
            open.folders[index] = fd
            return fd
        }
    }

    /// The place of sub-folder `name` among the kept ones: two lowercase hex digits, as `name(id:kind:)` writes.
    private static func index(of name: String) -> Int? {
        let digits = Array(name.utf8)
        guard digits.count == 2,
            digits.allSatisfy({
                (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0)
                    || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0)
            })
        else { return nil }
        return Int(name, radix: 16)
    }

    /// Runs `body` with the folder `name` (nil: the top), open; nil when it cannot be opened.
    private func withFolder<T>(_ name: String?, _ body: (Int32) -> T) -> T? {
        if name.map({ Self.index(of: $0) != nil }) ?? true {
            return (try? folder(name, create: false)).map(body)
        }
        guard let name, let fd = try? openFolder(name, create: false) else { return nil }
        defer { close(fd) }
        return body(fd)
    }

    private static let flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC

    private func openTop(create: Bool) throws -> Int32 {
        let flags = folderMayBeLink ? Self.flags & ~O_NOFOLLOW : Self.flags
        var top = Foundation.open(directory, flags)
        if top < 0, errno == ENOENT, create {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            top = Foundation.open(directory, flags)
        }
        guard top >= 0 else { throw Self.refusal(errno, at: AT_FDCWD, directory) }
        return top
    }

    private func openFolder(_ name: String, create: Bool) throws -> Int32 {
        let top = try folder(nil, create: create)
        var folder = openat(top, name, Self.flags)
        if folder < 0, errno == ENOENT, create {
            if mkdirat(top, name, 0o755) != 0, errno != EEXIST { throw Self.error(errno) }
            folder = openat(top, name, Self.flags)
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
        return error(code)
    }

    // MARK: Reading and listing

    /// The bytes of the file `name` (at most `limit`), if it names a plain file inside the folder
    /// and no link leads there.
    func read(_ name: String, limit: Int = 64 << 20) -> Data? {
        guard let (folderName, file) = Self.parts(of: name) else { return nil }
        return withFolder(folderName) { folder -> Data? in
            let fd = openat(folder, file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
            guard fd >= 0 else { return nil }
            defer { close(fd) }
            var status = stat()
            guard fstat(fd, &status) == 0, status.st_mode & S_IFMT == S_IFREG, Int(status.st_size) <= limit else {
                return nil
            }
            var data = Data(count: Int(status.st_size))
            let complete = data.withUnsafeMutableBytes { buffer in
                var offset = 0
                while offset < buffer.count {
                    let read = Foundation.read(fd, buffer.baseAddress! + offset, buffer.count - offset)
                    if read < 0, errno == EINTR { continue }
                    if read <= 0 { return false }
                    offset += read
                }
                return true
            }
            return complete ? data : nil
        } ?? nil
    }

    /// Removes the file `name`, if it names one inside the folder and no link leads there.
    func remove(_ name: String) {
        guard let (folderName, file) = Self.parts(of: name) else { return }
        _ = withFolder(folderName) { unlinkat($0, file, 0) }
    }

    /// Every file at the folder's top and in its sub-folders, as names relative to it. Links are
    /// listed (so `gc` can remove them), never followed.
    func allFiles() -> [String] {
        guard let entries = withFolder(nil, Self.entries) else { return [] }
        var names = entries.filter { ($0.type == DT_REG || $0.type == DT_LNK) && $0.name != Self.lockName }.map(\.name)
        for folder in entries where folder.type == DT_DIR {
            for entry in withFolder(folder.name, Self.entries) ?? [] where entry.type == DT_REG || entry.type == DT_LNK
            {
                names.append(folder.name + "/" + entry.name)
            }
        }
        return names
    }

    /// The entries of the open folder `fd` (which it leaves open), but `.` and `..`, with their types.
    private static func entries(of fd: Int32) -> [(name: String, type: Int32)] {
        // The folder afresh, not a `dup`: that would share the listing's place with the kept one.
        let copy = openat(fd, ".", flags)
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
    func size(of name: String) -> Int64? {
        guard let (folderName, file) = Self.parts(of: name) else { return nil }
        return withFolder(folderName) { folder -> Int64? in
            var status = stat()
            guard fstatat(folder, file, &status, AT_SYMLINK_NOFOLLOW) == 0, status.st_mode & S_IFMT == S_IFREG else {
                return nil
            }
            return Int64(status.st_size)
        } ?? nil
    }

    /// A temp file's name (`ab/.tmp-PID-N-1234.png`): a writer's, not a picture.
    static func isTemporary(_ name: String) -> Bool {
        (name as NSString).lastPathComponent.hasPrefix(temporaryPrefix)
    }

    /// A temp file of a process that ended (killed mid-write), or of none: `gc` removes it. A
    /// running process's temp files are its own to name or remove.
    func isLeftover(_ name: String) -> Bool {
        let file = (name as NSString).lastPathComponent
        guard file.hasPrefix(Self.temporaryPrefix) else { return false }
        let writer = file.dropFirst(Self.temporaryPrefix.count).prefix { $0 != "-" }
        guard let pid = pid_t(writer), pid > 0 else { return true }
        return kill(pid, 0) != 0 && errno == ESRCH
    }
}
