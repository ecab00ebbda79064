import ArgumentParser
import FeedSyncFrontend
import Foundation

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve", abstract: ServeOptions.abstract, discussion: ServeOptions.discussion)

    @OptionGroup var options: ServeOptions

    /// The page is served by `feedsync-serve`, installed beside this program, which this process
    /// becomes with the same arguments: the web server's modules live there, so that no other
    /// command pays for them at its start (BENCHMARKS.md, P5).
    func run() async throws {
        let server = Self.beside("feedsync-serve")
        // The new program keeps this thread's blocked signals: none, as when it starts by itself,
        // so that SIGINT and SIGTERM reach it.
        var none = sigset_t()
        sigemptyset(&none)
        pthread_sigmask(SIG_SETMASK, &none, nil)
        // `feedsync serve ARGUMENTS`: nothing comes before the command.
        let arguments = ([server] + CommandLine.arguments.dropFirst(2)).map { strdup($0) } + [nil]
        execv(server, arguments)
        complain(
            "cannot start \(server) (\(String(cString: strerror(errno)))), which serves the page; "
                + "install it beside feedsync (scripts/install)")
        throw ExitCode(Exit.ioError)
    }

    /// The program named `name` in this program's folder.
    static func beside(_ name: String) -> String {
        let own = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? ""
        return URL(fileURLWithPath: own).deletingLastPathComponent().appendingPathComponent(name).path
    }
}
