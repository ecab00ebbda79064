import ArgumentParser
import FeedSyncKit

/// `feedsync serve`'s options. `feedsync` parses and checks them (its help, its completions, its
/// usage errors), then becomes `feedsync-serve` with the same arguments, which parses them again
/// and serves.
package struct ServeOptions: ParsableArguments {
    package static let abstract = "Serve a reading page on this machine; its scrolling steers the picture prefetch."
    package static let discussion = """
        Prints the page's address with its access token; every request needs that token. With \
        --pull-every, pulls the feeds that are due in the background, taking the pull lock only \
        while it pulls (a cron pull and serve never run at once, and neither fails because of \
        the other).
        """

    /// The port a bookmark of the page finds it on, day after day.
    package static let defaultPort = 47070

    @OptionGroup package var homeOptions: HomeOptions

    @Option(
        help: ArgumentHelp(
            "The port to listen on (default \(defaultPort), a free one when it is taken); 0 picks a free one.",
            valueName: "n"))
    package var port: Int?

    @Flag(help: "Make a new access token; the page's old address and its cookie stop working.")
    package var newToken = false

    @Option(
        help: ArgumentHelp(
            "The address to listen on. Another than 127.0.0.1 is reachable from other machines.",
            valueName: "address"))
    package var bind = "127.0.0.1"

    @Option(
        help: ArgumentHelp(
            "Pull the feeds that are due this often (15m, 1h; minutes without a unit).", valueName: "duration"),
        transform: Interval.parse)
    package var pullEvery: Double?

    @Flag(help: "Open the page with $BROWSER or xdg-open.")
    package var open = false

    package init() {}

    package func validate() throws {
        if let port { try check(port, in: 0...65535, "--port") }
        // Often is harmless to publishers: a pull asks only the feeds that are due.
        if let pullEvery { try check(pullEvery, in: 10...FeedSync.maxInterval, "--pull-every (seconds)") }
        if bind.isEmpty || bind.utf8.count > 255 || bind.unicodeScalars.contains(where: SafeText.isUnsafe) {
            throw ValidationError("--bind must be an address such as 127.0.0.1")
        }
    }
}
