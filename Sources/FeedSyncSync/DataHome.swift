import Foundation

/// Where feedsync keeps its files. `FEEDSYNC_HOME` (or `--home`) puts everything in one folder;
/// otherwise the store follows `XDG_DATA_HOME` and pictures `XDG_CACHE_HOME`.
public struct DataHome: Sendable {
    /// Holds the database and the pull lock.
    public var dataDirectory: String
    /// Holds downloaded pictures.
    public var cacheDirectory: String
    /// The picture folder is the user's own (under `XDG_CACHE_HOME`), which may be a link to
    /// another disk; inside a `FEEDSYNC_HOME` it is `pictures/`, where a link would be planted.
    public var cacheDirectoryMayBeLink: Bool

    public var databasePath: String { dataDirectory + "/feedsync.sqlite" }
    public var lockPath: String { dataDirectory + "/pull.lock" }
    /// A feed document too long to hold in memory is written here while it is read; each feed
    /// pulled at the same time has its own `slot`.
    public func downloadPath(slot: Int) -> String { dataDirectory + "/download-\(slot).part" }

    /// `environment` gives a variable's value: by default the process's, each read alone, where
    /// ProcessInfo's dictionary of them all cost every command a twentieth of its start (measured).
    public init(override: String?, environment: (String) -> String? = { getenv($0).map { String(cString: $0) } }) {
        if let root = override ?? environment("FEEDSYNC_HOME").flatMap({ $0.isEmpty ? nil : $0 }) {
            let absolute = Self.absolute(root)
            dataDirectory = absolute
            cacheDirectory = absolute + "/pictures"
            cacheDirectoryMayBeLink = false
            return
        }
        let home = environment("HOME") ?? NSHomeDirectory()
        func xdg(_ name: String, _ fallback: String) -> String {
            // The XDG spec ignores relative paths.
            if let value = environment(name), value.hasPrefix("/") { return value }
            return home + "/" + fallback
        }
        dataDirectory = xdg("XDG_DATA_HOME", ".local/share") + "/feedsync"
        cacheDirectory = xdg("XDG_CACHE_HOME", ".cache") + "/feedsync"
        cacheDirectoryMayBeLink = true
    }

    /// Creates the folders if needed.
    public func prepare() throws(SyncError) {
        for directory in [dataDirectory, cacheDirectory] {
            do {
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            } catch {
                throw SyncError(
                    .local,
                    "cannot create \(directory): \(error.localizedDescription); "
                        + "check its permissions or set FEEDSYNC_HOME"
                )
            }
        }
    }

    static func absolute(_ path: String) -> String {
        if path.hasPrefix("/") { return path }
        return FileManager.default.currentDirectoryPath + "/" + path
    }
}

/// One pull per data home: an exclusive `flock` on `pull.lock`, released when the process ends
/// however it ends (the kernel drops it with the descriptor).
public final class PullLock: Sendable {
    private let descriptor: Int32

    /// Takes the lock or fails at once, naming the process that holds it.
    public init(path: String) throws(SyncError) {
        // O_NOFOLLOW: a link planted at the name must not make us create or truncate a file elsewhere.
        let fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            throw SyncError(.local, "cannot open the lock file \(path): \(String(cString: strerror(errno)))")
        }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            var buffer = [UInt8](repeating: 0, count: 32)
            let count = pread(fd, &buffer, buffer.count, 0)
            let holder = String(decoding: buffer.prefix(max(0, count)), as: UTF8.self)
                .trimmingCharacters(in: .whitespacesAndNewlines)
            close(fd)
            throw SyncError(
                .transient,
                "another pull is running in this data home\(holder.isEmpty ? "" : " (pid \(holder))"); "
                    + "try again when it has finished"
            )
        }
        let pid = "\(getpid())\n"
        ftruncate(fd, 0)
        _ = pid.withCString { pwrite(fd, $0, strlen($0), 0) }
        descriptor = fd
    }

    deinit {
        close(descriptor)
    }
}
