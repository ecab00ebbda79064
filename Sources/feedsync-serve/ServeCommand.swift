import ArgumentParser
import FeedSyncFrontend
import FeedSyncKit
import FeedSyncServe
import Foundation

/// `feedsync serve`, which `feedsync` becomes once it has checked the arguments (see its `Serve`).
@main
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "feedsync serve", abstract: ServeOptions.abstract, discussion: ServeOptions.discussion)

    @OptionGroup var options: ServeOptions

    static func main() async { await runAsRoot() }

    func run() async throws {
        let (bind, pullEvery) = (options.bind, options.pullEvery)
        let library = try await options.homeOptions.open(.serving)
        let (token, kept, path) = PageToken.load(in: library.home, new: options.newToken)
        if !kept { complain("cannot keep the page's token in \(path); this address holds until serve stops") }
        var settings = ReadingServer.Settings(token: token)
        settings.bind = bind
        settings.port = options.port ?? ServeOptions.defaultPort
        let port = settings.port
        let shown = bind == "0.0.0.0" || bind == "::" ? "127.0.0.1" : bind
        let opens = options.open
        let serveOn: @Sendable (Int) async throws -> Void = { [settings] port in
            var settings = settings
            settings.port = port
            try await ReadingServer(library: library, settings: settings).run { port in
                let address = "http://\(shown.contains(":") ? "[\(shown)]" : shown):\(port)/?token=\(token)"
                try? Output.line(address)
                if opens { Self.openInBrowser(address, home: library.home) }
            }
        }
        // The default port taken (another serve, or anything else): a free one, said so.
        let fallsBack = options.port == nil && port != 0
        let work = Task {
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    do {
                        try await serveOn(port)
                    } catch is ReadingServer.PortTaken where fallsBack {
                        complain("port \(ServeOptions.defaultPort) is taken; serving on another (the address below)")
                        try await serveOn(0)
                    }
                }
                if let pullEvery {
                    group.addTask { await library.pullRepeatedly(every: pullEvery) }
                }
                try await group.next()
                group.cancelAll()
            }
        }
        if bind != "127.0.0.1" && bind != "localhost" && bind != "::1" {
            complain("warning: --bind \(bind) makes the page reachable from other machines; it still needs the token")
        }
        let interruption = Interruption { work.cancel() }
        defer { interruption.stop() }
        do {
            try await work.value
        } catch is CancellationError {
        } catch {
            complain("cannot serve on \(bind):\(port): \(error)")
            throw ExitCode(Exit.tempFail)
        }
    }

    /// Opens the page without its token on any command line (where every local user could read
    /// it): through a file of the data home only its owner can read, which redirects there.
    static func openInBrowser(_ address: String, home: DataHome) {
        guard let path = PageToken.opener(for: address, in: home) else {
            return complain("cannot write \(home.dataDirectory)/open.html to open the page; open the address above")
        }
        // Browser.open waits for the browser; the server goes on meanwhile.
        Thread { _ = Browser.open("file://" + path) }.start()
    }
}
