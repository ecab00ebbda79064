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
        let token = Self.token(in: library.home, new: options.newToken)
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

    /// The page's access token: kept in the data home (`serve.token`, only its owner reads it), so
    /// the page's address stays good from one start to the next; made anew when there is none,
    /// it is not one, or `new`. Made for this run only when it cannot be kept.
    static func token(in home: DataHome, new: Bool) -> String {
        let path = home.dataDirectory + "/serve.token"
        func valid(_ text: String) -> Bool {
            text.utf8.count == 32 && text.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
        }
        if !new {
            let fd = Glibc.open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
            if fd >= 0 {
                var buffer = [UInt8](repeating: 0, count: 64)
                let count = read(fd, &buffer, buffer.count)
                close(fd)
                let text = String(decoding: buffer.prefix(max(0, count)), as: UTF8.self)
                    .trimmingCharacters(in: .whitespacesAndNewlines)
                if valid(text) { return text }
            }
        }
        var bytes = SystemRandomNumberGenerator()
        let token = (0..<16).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &bytes)) }.joined()
        unlink(path)
        let fd = Glibc.open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            complain("cannot keep the page's token in \(path); this address holds until serve stops")
            return token
        }
        _ = (token + "\n").utf8CString.withUnsafeBufferPointer { write(fd, $0.baseAddress, $0.count - 1) }
        close(fd)
        return token
    }

    /// Opens the page without its token on any command line (where every local user could read
    /// it): through a file of the data home only its owner can read, which redirects there.
    static func openInBrowser(_ address: String, home: DataHome) {
        let path = home.dataDirectory + "/open.html"
        unlink(path)
        let fd = Glibc.open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return complain("cannot write \(path) to open the page; open the address above") }
        let page = "<!doctype html><meta http-equiv=\"refresh\" content=\"0;url=\(address)\">\n"
        _ = page.utf8CString.withUnsafeBufferPointer { write(fd, $0.baseAddress, $0.count - 1) }
        close(fd)
        // Browser.open waits for the browser; the server goes on meanwhile.
        Thread { _ = Browser.open("file://" + path) }.start()
    }
}
