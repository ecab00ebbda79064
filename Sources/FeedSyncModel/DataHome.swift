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
