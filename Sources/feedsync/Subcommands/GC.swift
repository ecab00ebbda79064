import ArgumentParser
import FeedSyncFrontend
import FeedSyncKit
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

    @Flag(
        name: .customLong("check"),
        help: ArgumentHelp(
            "Change nothing: check that every cached picture's file is there, whole and unchanged (its "
                + "size and hash) and every file is a picture's; exit 74 naming what disagrees."))
    var checkOnly = false

    func validate() throws {
        try check(prefetchPages, in: PictureOptions.prefetchPages, "--prefetch-pages")
    }

    func run() async throws {
        if checkOnly { return try await checkCache() }
        // The cache is the pull's to write: tidy it only when no pull runs (the lock).
        let library = try await homeOptions.open(.writing)
        let done = try await fail(on: {
            try await library.collectGarbage(cacheSize: pictureOptions.cacheSize, pagesAhead: prefetchPages)
        })
        if Terminal.isInteractive {
            try Output.line(
                """
                removed \(done.temporaryFiles) temp files, \(done.unknownFiles) unknown files, \
                \(done.unusedPictures) unused pictures; forgot \(done.forgotten) pictures whose file was gone or damaged; \
                evicted \(done.evicted) (\(done.evictedBytes) bytes)
                """)
        }
    }

    /// `--check`: beside a running pull too (it takes the picture folder's lock, not the pull's).
    func checkCache() async throws {
        let library = try await homeOptions.open(.reading)
        let found = try await fail(on: { try await library.checkCache() })
        try Output.line(
            "\(found.cached) cached pictures; missing files \(found.missing.count), partial \(found.partial.count), "
                + "damaged \(found.damaged.count), unknown \(found.unknown.count), temp files of ended processes \(found.leftovers.count)"
        )
        guard found.isClean else {
            let named = (found.missing + found.partial + found.damaged + found.unknown + found.leftovers).prefix(5)
            complain(
                "the picture cache and the store disagree (\(named.joined(separator: ", "))); feedsync gc mends it")
            throw ExitCode(Exit.ioError)
        }
    }
}
