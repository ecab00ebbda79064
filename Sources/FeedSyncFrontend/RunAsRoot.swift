import ArgumentParser
import Foundation

extension AsyncParsableCommand {
    /// As swift-argument-parser's own `main`, but its messages (which echo the arguments given)
    /// are made safe for a terminal like every other message, and written with a checked write.
    package static func runAsRoot() async {
        do {
            var command = try await asyncParseAsRoot()
            if var command = command as? any AsyncParsableCommand {
                try await command.run()
            } else {
                try command.run()
            }
        } catch {
            let code = exitCode(for: error)
            let message = fullMessage(for: error)
            if !message.isEmpty {
                let safe = message.split(separator: "\n", omittingEmptySubsequences: false)
                    .map { Terminal.safe(String($0)) }.joined(separator: "\n")
                if code == .success {
                    if (try? Output.line(safe)) == nil { Glibc.exit(Exit.ioError) }
                } else {
                    Output.error(safe)
                }
            }
            Glibc.exit(code.rawValue)
        }
    }
}
