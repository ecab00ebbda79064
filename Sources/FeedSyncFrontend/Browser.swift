import Foundation

/// Opening a link outside feedsync.
package enum Browser {
    /// Runs the first command of `$BROWSER` (a `%s` in it replaced by the link, else the link
    /// appended), else `xdg-open`, with the link as one argument (no shell); false when neither
    /// could run or it failed.
    package static func open(_ link: String) -> Bool {
        let environment = ProcessInfo.processInfo.environment
        var commands: [[String]] = []
        if let browser = environment["BROWSER"] {
            for command in browser.split(separator: ":") {
                let words = command.split(separator: " ").map(String.init)
                guard !words.isEmpty else { continue }
                commands.append(words.contains("%s") ? words.map { $0 == "%s" ? link : $0 } : words + [link])
            }
        }
        commands.append(["xdg-open", link])
        for command in commands {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = command
            process.environment = Helper.environment
            process.standardError = FileHandle.nullDevice
            guard (try? process.run()) != nil else { continue }
            process.waitUntilExit()
            if process.terminationStatus == 0 { return true }
        }
        return false
    }
}

/// A program feedsync starts for the user (a browser, a pager).
package enum Helper {
    /// Its environment: feedsync's, without the account password a user may have exported for
    /// feedsync alone.
    package static var environment: [String: String] {
        ProcessInfo.processInfo.environment.filter { $0.key != "FEEDSYNC_PASSWORD" }
    }
}
