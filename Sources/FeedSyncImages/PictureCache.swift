import FeedSyncStore
import Foundation

/// The picture cache as one thing: its folder (`PictureFiles`) and the store's rows of it. Every
/// change to both runs holding the folder's lock (`PictureFiles.exclusively`), so whatever another
/// process does meanwhile, no row names a missing file and no file stays that no row names.
public struct PictureCache: Sendable {
    let store: Store
    let files: PictureFiles

    public init(store: Store, directory: String, directoryMayBeLink: Bool = false) {
        self.store = store
        files = PictureFiles(directory: directory, folderMayBeLink: directoryMayBeLink)
    }

    /// Where a picture stored as `file` is (stored names are relative to the folder).
    public func path(_ file: String) -> String {
        file.hasPrefix("/") ? file : files.path(file)
    }

    /// The cached picture stored as `file`, read without following a link, and its type (the
    /// kind it was checked to be when cached, which its file's extension names).
    public func read(_ file: String) -> (data: Data, type: String)? {
        let ext = (file as NSString).pathExtension
        guard let kind = ImageKind.allCases.first(where: { $0.fileExtension == ext }), let data = files.read(file)
        else { return nil }
        return (data, kind.mime)
    }

    /// Runs `change`, which takes rows from the store and returns their files, then removes
    /// those files: both under the folder's lock (`remove` of a feed).
    public func removing(_ change: () async throws(StoreError) -> [String]) async throws(StoreError) {
        try await files.exclusively { () async throws(StoreError) in try await change().forEach(files.remove) }
    }

    /// What `collectGarbage` did.
    public struct GarbageReport: Sendable {
        public var temporaryFiles = 0
        public var unknownFiles = 0
        public var unusedPictures = 0
        /// Pictures whose file was gone, now due again.
        public var forgotten = 0
        public var evicted = 0
        public var evictedBytes: Int64 = 0
    }

    /// Removes the temp files of ended processes and files the store does not know, forgets
    /// pictures whose file is gone and pictures no item uses, then evicts the pictures farthest
    /// from `position` until the cache fits `budget`, keeping the window (`pagesAhead` pages past
    /// the reader). Only one such process at a time (the pull lock's holder).
    public func collectGarbage(budget: Int64, pagesAhead: Int, around position: ReadingPosition)
        async throws(StoreError) -> GarbageReport
    {
        var report = GarbageReport()
        // Holding the folder's lock: `serve`'s page fetches may place and record pictures meanwhile.
        try await files.exclusively { () async throws(StoreError) in
            report.temporaryFiles = files.sweepTemporaryFiles()
            let unused = try await store.deleteUnusedPictures()
            unused.forEach(files.remove)
            report.unusedPictures = unused.count
            let known = try await store.cachedPictureFiles()
            // A running writer's temp files are its own.
            let onDisk = Set(files.allFiles().filter { !PictureFiles.isTemporary($0) })
            let unknown = onDisk.subtracting(known.values.map(\.file))
            unknown.forEach(files.remove)
            report.unknownFiles = unknown.count
            for (id, (file, _)) in known where !onDisk.contains(file) {
                try await store.uncachePicture(id: id)
                report.forgotten += 1
            }
        }
        let evicted = try await CacheBudget(store: store, files: files, bytes: budget, pagesAhead: pagesAhead)
            .enforce(around: position)
        report.evicted = evicted.count
        report.evictedBytes = evicted.bytes
        return report
    }

    /// What `check` found: where the folder and the store disagree.
    public struct Check: Sendable {
        public var cached = 0
        /// Cached pictures whose file is not there.
        public var missing: [String] = []
        /// Cached pictures whose file is not the size recorded.
        public var partial: [String] = []
        /// Files no picture names (temp files of running writers aside).
        public var unknown: [String] = []
        /// Temp files of processes that ended.
        public var leftovers: [String] = []

        public var isClean: Bool { missing.isEmpty && partial.isEmpty && unknown.isEmpty && leftovers.isEmpty }
    }

    /// Compares the folder with the store, changing nothing (`gc --check`): holding the folder's
    /// lock, so a writer's half-done work is never counted.
    public func check() async throws(StoreError) -> Check {
        try await files.exclusively { () async throws(StoreError) in
            var check = Check()
            let known = try await store.cachedPictureFiles()
            let onDisk = files.allFiles()
            check.cached = known.count
            for (file, bytes) in known.values {
                guard let size = files.size(of: file) else {
                    check.missing.append(file)
                    continue
                }
                if size != bytes { check.partial.append(file) }
            }
            let named = Set(known.values.map(\.file))
            check.leftovers = onDisk.filter(files.isLeftover)
            check.unknown = onDisk.filter { !PictureFiles.isTemporary($0) && !named.contains($0) }
            return check
        }
    }
}
