import FeedSyncKit
import Foundation

/// An item's text laid out for a terminal, as newsboat and w3m write HTML in text: paragraphs
/// wrapped to the width, headings bold (on a terminal), quotes behind a bar, list items behind
/// their bullet or number with their lines under their text, code as written, indented.
package enum TextLayout {
    /// The lines of `rendered`'s blocks at `width` cells, a blank line between two blocks but
    /// between the items of one list. `styled`: headings in bold (escape sequences of our own,
    /// never the text's: every line is made safe first).
    package static func lines(_ rendered: RenderedText, width: Int, styled: Bool) -> [String] {
        lines(rendered, width: width, styled: styled, endOfBlock: { _ in })
    }

    /// The same lines, `endOfBlock` told how many lines there are once each block is laid out
    /// (where a picture inside it goes).
    package static func lines(
        _ rendered: RenderedText, width: Int, styled: Bool, endOfBlock: (Int) -> Void
    ) -> [String] {
        var lines: [String] = []
        var previous: TextBlock?
        for block in rendered.blocks {
            defer { endOfBlock(lines.count) }
            if let previous, !(isItem(previous) && isItem(block) && previous.list == block.list) { lines.append("") }
            previous = block
            let bar = String(repeating: "│ ", count: block.quoted)
            let indent = String(repeating: "  ", count: max(0, block.lists - 1))
            let room = max(10, width - Terminal.displayWidth(bar + indent))
            switch block.kind {
            case .code:
                lines += block.text.split(separator: "\n", omittingEmptySubsequences: false).map {
                    bar + indent + "    " + Terminal.safe(String($0))
                }
            case .item(let marker):
                let hang = String(repeating: " ", count: marker.count)
                var first = true
                for line in block.text.split(separator: "\n", omittingEmptySubsequences: false) {
                    for wrapped in Terminal.wrap(Terminal.safe(String(line)), width: room - marker.count) {
                        lines.append(bar + indent + (first ? marker : hang) + wrapped)
                        first = false
                    }
                }
            case .heading, .paragraph:
                let bold: Bool
                if case .heading = block.kind { bold = styled } else { bold = false }
                // A later block of a list item sits under its text.
                let under = block.lists > 0 ? "  " : ""
                for line in block.text.split(separator: "\n", omittingEmptySubsequences: false) {
                    for wrapped in Terminal.wrap(Terminal.safe(String(line)), width: room - under.count) {
                        lines.append(bar + indent + under + (bold ? "\u{1B}[1m" + wrapped + "\u{1B}[22m" : wrapped))
                    }
                }
            }
        }
        return lines
    }

    private static func isItem(_ block: TextBlock) -> Bool {
        if case .item = block.kind { true } else { false }
    }
}

/// Text longer than the screen, shown through the user's pager.
package enum Pager {
    /// Writes `text` through `$PAGER` (else `less -R`, which shows our bold) when standard output
    /// is a terminal and `text` has more lines than it; else, or when no pager could be started,
    /// as it is.
    package static func show(_ text: String) throws {
        let lineCount = text.reduce(into: 1) { count, character in if character == "\n" { count += 1 } }
        guard Terminal.isInteractive, lineCount >= Terminal.height else { return try Output.line(text) }
        let chosen = ProcessInfo.processInfo.environment["PAGER"] ?? "less -R"
        guard !chosen.trimmingCharacters(in: .whitespaces).isEmpty, run(chosen, text + "\n") else {
            return try Output.line(text)
        }
    }

    /// Runs `command` by the shell, as `$PAGER` is meant, with `text` on its standard input, and
    /// waits for it: whether it started.
    private static func run(_ command: String, _ text: String) -> Bool {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { return false }
        _ = fcntl(ends[1], F_SETFD, FD_CLOEXEC)
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, ends[0], 0)
        posix_spawn_file_actions_addclose(&actions, ends[0])
        // less without LESS set would not pass our bold through; with it set, the user's choice.
        var environment = Helper.environment
        if environment["LESS"] == nil { environment["LESS"] = "R" }
        let words: [String] = ["/bin/sh", "-c", command]
        let argv: [UnsafeMutablePointer<CChar>?] = words.map { strdup($0) } + [nil]
        let envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in argv + envp { free(pointer) } }
        // Ctrl-C is the pager's (less clears a search with it): this process ignores it while the
        // pager runs, and the pager starts with SIGINT and SIGQUIT as they are by default.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGINT)
        sigaddset(&defaults, SIGQUIT)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF))
        let interrupt = signal(SIGINT, SIG_IGN)
        let quit = signal(SIGQUIT, SIG_IGN)
        defer {
            signal(SIGINT, interrupt)
            signal(SIGQUIT, quit)
        }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, "/bin/sh", &actions, &attributes, argv, envp)
        close(ends[0])
        guard spawned == 0 else {
            close(ends[1])
            return false
        }
        // A pager quit early closes the pipe: the rest is not wanted (EPIPE, SIGPIPE ignored here).
        let previous = signal(SIGPIPE, SIG_IGN)
        var bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeMutableBytes { write(ends[1], $0.baseAddress! + offset, $0.count - offset) }
            if written < 0, errno == EINTR { continue }
            guard written > 0 else { break }
            offset += written
        }
        close(ends[1])
        signal(SIGPIPE, previous)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0, errno == EINTR {}
        return true
    }
}
