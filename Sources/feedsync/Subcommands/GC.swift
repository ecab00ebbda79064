import ArgumentParser
import FeedSyncImages
import FeedSyncStore
import Foundation

struct GC: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gc",
        abstract: "Tidy the picture cache: drop what the store does not know, fit the cache size.",
        discussion: """
            Removes leftover temp files and files the store does not know, forgets pictures whose \
            file is gone and pictures no item uses, then evicts the pictures farthest from the \
            reading position until the cache fits --cache-size. Pictures in the window are kept.
            """)

    @OptionGroup var homeOptions: HomeOptions
    @OptionGroup var pictureOptions: PictureOptions

    @Option(help: ArgumentHelp("The window kept: pages past the reading position.", valueName: "k"))
    var prefetchPages = 5

    func validate() throws {
        try check(prefetchPages, in: PictureOptions.prefetchPages, "--prefetch-pages")
    }

    func run() async throws {
        // The cache is the pull's to write: tidy it only when no pull runs.
        let (dataHome, lock, store) = try homeOptions.lockAndOpenStore()
        defer { withExtendedLifetime(lock) {} }
        let files = PictureFiles(directory: dataHome.cacheDirectory, folderMayBeLink: dataHome.cacheDirectoryMayBeLink)

        let swept = files.sweepTemporaryFiles()
        let unused = try fail(on: { try store.deleteUnusedPictures() })
        unused.forEach(files.remove)
        let known = try fail(on: { try store.cachedPictureFiles() })
        let onDisk = Set(files.allFiles())
        let unknown = onDisk.subtracting(known.values)
        unknown.forEach(files.remove)
        var gone = 0
        for (id, file) in known where !onDisk.contains(file) {
            try fail(on: { try store.uncachePicture(id: id) })
            gone += 1
        }

        let budget = CacheBudget(
            store: store, files: files, bytes: try pictureOptions.budget(store), pagesAhead: prefetchPages)
        let position = try fail(on: { try store.latestReadingPosition() }) ?? .start
        let evicted = try fail(on: { try budget.enforce(around: position) })

        if Terminal.isInteractive {
            try Output.line("""
                removed \(swept) temp files, \(unknown.count) unknown files, \(unused.count) unused pictures; \
                forgot \(gone) pictures whose file was gone; evicted \(evicted.count) (\(evicted.bytes) bytes)
                """)
        }
    }
}

