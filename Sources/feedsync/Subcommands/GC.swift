import ArgumentParser
import FeedSyncFrontend
import FeedSyncKit
import Foundation

struct GC: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gc",
        abstract: "Tidy the picture cache (drop what the store does not know, fit the cache size); remove old items.",
        discussion: """
            Removes leftover temp files and files the store does not know, forgets pictures whose \
            file is gone and pictures no item uses, then evicts the pictures farthest from the \
            reading position until the cache fits --cache-size. Pictures in the window are kept. \
            With --older-than, first removes the items read (or hidden by a rule) and not starred \
            that are older than that (never a starred or an unread shown one), with the pictures \
            only they show; a later pull does not bring them back.
            """)

    @OptionGroup var homeOptions: HomeOptions
    @OptionGroup var pictureOptions: PictureOptions

    @Option(help: ArgumentHelp("The window kept: pages past the reading position.", valueName: "k"))
    var prefetchPages = 5

    @Option(
        help: ArgumentHelp(
            "Also remove the read, unstarred items older than this: a duration (90d, 12w) or a date (YYYY-MM-DD).",
            valueName: "age"))
    var olderThan: String?

    @Flag(
        name: .customLong("check"),
        help: ArgumentHelp(
            "Change nothing: check that every cached picture's file is there, whole and unchanged (its "
                + "size and hash) and every file is a picture's; exit 74 naming what disagrees."))
    var checkOnly = false

    func validate() throws {
        try check(prefetchPages, in: PictureOptions.prefetchPages, "--prefetch-pages")
        if let olderThan, DateArgument.parse(olderThan) == nil {
            throw ValidationError(
                "--older-than \(String(reflecting: olderThan)) is no age: give one like 90d, or a date")
        }
        if olderThan != nil, checkOnly { throw ValidationError("--check changes nothing: it takes no --older-than") }
    }

    func run() async throws {
        if checkOnly { return try await checkCache() }
        // The cache is the pull's to write: tidy it only when no pull runs (the lock).
        let library = try await homeOptions.open(.writing)
        if let before = olderThan.flatMap({ DateArgument.parse($0) }) {
            let removed = try await fail { try await library.removeItems(before: before) }
            try Output.wrapped(
                "removed \(removed) read, unstarred item\(removed == 1 ? "" : "s") older than \(Terminal.safe(olderThan!))"
            )
        }
        let (cacheSize, pagesAhead) = (pictureOptions.cacheSize, prefetchPages)
        let (collected, wasInterrupted) = try await fail(on: {
            try await interruptible { try await library.collectGarbage(cacheSize: cacheSize, pagesAhead: pagesAhead) }
        })
        guard let done = collected, !done.interrupted, !wasInterrupted else {
            throw interrupted("what was tidied stays tidied; the next gc goes on with the rest")
        }
        try Output.wrapped(
            """
            removed \(done.temporaryFiles) temp files, \(done.unknownFiles) unknown files, \
            \(done.unusedPictures) unused pictures; forgot \(done.forgotten) pictures whose file was gone or damaged; \
            evicted \(done.evicted) (\(ByteSize.format(Double(done.evictedBytes))))
            """)
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
