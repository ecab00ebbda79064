import CFeedSyncSystem
import FeedSyncModel
import FeedSyncStore
import FeedSyncTransport
import Foundation

/// The picture cache, and its one owner: the picture folder (`PictureFolder`) and the store's
/// rows of it. Everything that stores, reads, evicts, tidies or removes a picture calls this; no
/// other code opens a file in the folder. A process has one (`FeedSync`'s).
///
/// Written pictures are named only once whole and recorded in batches with their byte count and
/// XXH3-64 hash, with no flush: every read checks both, and a picture that fails (cut short by a
/// crash, changed or removed behind feedsync's back) is dropped, recorded as not cached and so due
/// again, and never shown.
///
/// Between processes (a pull, `serve`'s page fetches, `gc`), every change to files and rows
/// together runs holding the folder's lock (`PictureFolder.exclusively`), so no writer sees
/// another's half done. Reads take no lock: a picture route never waits for a pull's batch.
public final class PictureCache: Sendable {
    public typealias GarbageReport = CacheGarbageReport
    public typealias Check = CacheCheck
    let store: Store
    let folder: PictureFolder

    public init(store: Store, directory: String, directoryMayBeLink: Bool = false) {
        self.store = store
        folder = PictureFolder(directory: directory, folderMayBeLink: directoryMayBeLink)
    }

    /// Where the picture stored as `file` is (stored names are relative to the folder).
    func path(_ file: String) -> String { folder.path(file) }

    // MARK: Storing

    /// A checked picture, written and not yet named or recorded.
    struct Written: Sendable {
        let picture: DownloadedPicture
        let file: PictureFolder.Unnamed
    }

    /// Why a download is not kept, and whether it could change by asking again later.
    struct Refusal: Error {
        var reason: String
        var permanent: Bool
        /// A local fault the user must fix (a symbolic link in the folder), said so.
        var localFault: String?
    }

    /// Checks a downloaded body (its magic number, a sane size in its header) and writes it,
    /// nameless, for the picture `id`.
    func accept(_ body: Data, for id: Int64) -> Result<Written, Refusal> {
        guard let kind = ImageKind.sniff(body) else {
            let start = String(decoding: body.prefix(16), as: UTF8.self)
            return .failure(
                Refusal(
                    reason: body.isEmpty
                        ? "the body is empty" : "not an image (starts with \(String(reflecting: start)))",
                    permanent: true))
        }
        guard ImageKind.dimensions(of: body, as: kind) != nil else {
            return .failure(
                Refusal(
                    reason: "not a whole \(kind.rawValue.uppercased()) picture (its header gives no sane size)",
                    permanent: true))
        }
        let name = PictureFolder.name(id: id, kind: kind)
        do {
            let file = try folder.write(body, for: name)
            let picture = DownloadedPicture(
                id: id, file: name, bytes: Int64(body.count), mime: kind.mime, hash: Self.hash(body))
            return .success(Written(picture: picture, file: file))
        } catch {
            return .failure(
                Refusal(
                    reason: "cannot write the picture: \(error)", permanent: false,
                    localFault: error is PictureFolder.UnsafeFolder ? "\(error)" : nil))
        }
    }

    static func hash(_ data: Data) -> UInt64 {
        data.withUnsafeBytes { fs_hash64($0.baseAddress, $0.count) }
    }

    /// Names written pictures and marks them cached in one transaction, holding the folder's
    /// lock, so another process's eviction or sweep never sees a name placed and not recorded.
    /// The files are closed before they are recorded. Throws why it could not (its names are
    /// then removed).
    func record(_ batch: [Written]) async throws {
        var named: [String] = []
        do {
            try await folder.exclusively {
                for written in batch {
                    try folder.name(written.file, as: written.picture.file)
                    named.append(written.picture.file)
                }
                try await store.markPicturesCached(batch.map(\.picture))
            }
        } catch {
            named.forEach(folder.remove)
            throw error
        }
    }

    // MARK: Reading

    /// The cached picture's bytes and type (the kind it was checked to be, which its file's
    /// extension names), once its size and hash are what was recorded. A picture that fails is
    /// dropped (`drop`): nil.
    public func read(_ picture: CachedFile) async -> (data: Data, type: String)? {
        let ext = (picture.file as NSString).pathExtension
        guard let kind = ImageKind.allCases.first(where: { $0.fileExtension == ext }) else { return nil }
        guard let data = verified(picture) else {
            await drop(picture)
            return nil
        }
        return (data, kind.mime)
    }

    /// Where the cached picture is, once checked as `read` checks it; nil (and dropped) when it fails.
    public func verifiedPath(_ picture: CachedFile) async -> String? {
        guard verified(picture) != nil else {
            await drop(picture)
            return nil
        }
        return path(picture.file)
    }

    /// The file's bytes when they are the size and hash recorded (the size only for a picture
    /// cached before hashes were kept).
    func verified(_ picture: CachedFile) -> Data? {
        guard let data = folder.read(picture.file, limit: Int(max(0, picture.bytes))), data.count == picture.bytes
        else { return nil }
        if let hash = picture.hash, Self.hash(data) != hash { return nil }
        return data
    }

    /// Forgets a picture whose file failed a read, and removes that file: checked again holding
    /// the folder's lock, with the folders opened afresh, so a picture another writer named and
    /// recorded meanwhile, or a folder made again since, is left alone. The picture is due again
    /// at once. A store that cannot be written (read-only) keeps its row; every read fails it.
    func drop(_ picture: CachedFile) async {
        folder.reopen()
        await folder.exclusively {
            guard let current = try? await store.cachedPictureFiles(ids: [picture.id]).first, current == picture,
                verified(current) == nil
            else { return }
            guard (try? await store.uncachePicture(id: picture.id)) != nil else { return }
            folder.remove(picture.file)
        }
    }

    // MARK: The budget

    /// Evicts until the cache fits `budget`, holding the folder's lock: each picture's row and
    /// file go together for every other writer.
    @discardableResult
    func evict(budget: Int64, pagesAhead: Int, around position: ReadingPosition) async throws(StoreError)
        -> CacheBudget.Eviction
    {
        try await folder.exclusively { () async throws(StoreError) in
            try await CacheBudget(store: store, folder: folder, bytes: budget, pagesAhead: pagesAhead)
                .evict(around: position)
        }
    }

    /// `CacheBudget.reach`: how far from the reader a picture may be and still be worth fetching.
    func reach(budget: Int64, pagesAhead: Int, around position: ReadingPosition) async throws(StoreError) -> Int {
        try await CacheBudget(store: store, folder: folder, bytes: budget, pagesAhead: pagesAhead)
            .reach(around: position)
    }

    // MARK: Tidying

    /// Runs `change`, which takes rows from the store and returns their files, then removes
    /// those files: both under the folder's lock (`remove` of a feed).
    public func removing(_ change: () async throws(StoreError) -> [String]) async throws(StoreError) {
        try await folder.exclusively { () async throws(StoreError) in try await change().forEach(folder.remove) }
    }

    /// Removes the temp files of ended processes and files the store does not know, forgets
    /// pictures whose file fails a read's check (gone, cut short, changed) and pictures no item uses, records
    /// the hash of a picture cached before hashes were kept, then evicts the pictures farthest
    /// from `position` until the cache fits `budget`, keeping the window (`pagesAhead` pages past
    /// the reader). Only one such process at a time (the pull lock's holder).
    public func collectGarbage(budget: Int64, pagesAhead: Int, around position: ReadingPosition)
        async throws(StoreError) -> GarbageReport
    {
        var report = GarbageReport()
        // Holding the folder's lock: `serve`'s page fetches may name and record pictures meanwhile.
        try await folder.exclusively { () async throws(StoreError) in
            // Interrupted while it waited for the folder's lock: nothing done.
            if Task.isCancelled {
                report.interrupted = true
                return
            }
            let onDisk = folder.allFiles()
            let leftovers = onDisk.filter(folder.isLeftover)
            leftovers.forEach(folder.remove)
            report.temporaryFiles = leftovers.count
            let unused = try await store.deleteUnusedPictures()
            unused.forEach(folder.remove)
            report.unusedPictures = unused.count
            let known = try await store.cachedPictureFiles()
            // A running writer's temp files are its own.
            let pictures = Set(onDisk.filter { !PictureFolder.isTemporary($0) }).subtracting(unused)
            let unknown = pictures.subtracting(known.map(\.file))
            unknown.forEach(folder.remove)
            report.unknownFiles = unknown.count
            for picture in known {
                // Reading every picture is the long part: an interrupt stops it between two.
                if Task.isCancelled {
                    report.interrupted = true
                    return
                }
                guard pictures.contains(picture.file), let data = verified(picture) else {
                    try await store.uncachePicture(id: picture.id)
                    folder.remove(picture.file)
                    report.forgotten += 1
                    continue
                }
                if picture.hash == nil { try await store.setPictureHash(Self.hash(data), of: picture) }
            }
        }
        guard !report.interrupted else { return report }
        let evicted = try await evict(budget: budget, pagesAhead: pagesAhead, around: position)
        report.evicted = evicted.count
        report.evictedBytes = evicted.bytes
        return report
    }

    /// Compares the folder with the store, reading every cached picture as a read checks it and
    /// changing nothing (`gc --check`): holding the folder's lock, so a writer's half-done work is
    /// never counted.
    public func check() async throws(StoreError) -> Check {
        try await folder.exclusively { () async throws(StoreError) in
            var check = Check()
            let known = try await store.cachedPictureFiles()
            let onDisk = folder.allFiles()
            check.cached = known.count
            for picture in known {
                guard let size = folder.size(of: picture.file) else {
                    check.missing.append(picture.file)
                    continue
                }
                if size != picture.bytes {
                    check.partial.append(picture.file)
                } else if verified(picture) == nil {
                    check.damaged.append(picture.file)
                }
            }
            let named = Set(known.map(\.file))
            check.leftovers = onDisk.filter(folder.isLeftover)
            check.unknown = onDisk.filter { !PictureFolder.isTemporary($0) && !named.contains($0) }
            return check
        }
    }
}
