internal import CFeedSyncSystem
import FeedSyncFrontend
import FeedSyncKit
import Foundation

/// What wakes the reader's loop.
package enum Event: Sendable {
    case input([UInt8])
    /// The terminal was resized (`w`) or the process continued after a stop (`c`).
    case wake(UInt8)
    /// The keys stopped: this many keys had come (an older count is a rest already passed).
    case rest(Int)
    /// A lone ESC waited long enough to be the Escape key.
    case flush
    /// Time to count what a pull added.
    case poll
    case picture(Thumbnails.Key, Thumbnails.Entry)
    case fetched(Int64)
    case articlePictures(Int64)
    case pulled(new: Int, failed: Bool)
}

/// The terminal session: `/dev/tty` taken (raw mode, the alternate screen, the mouse) and given
/// back whole however it ends (CFeedSyncSystem's handlers), the input read on a thread of its
/// own, and the loop: each event handled, then the frame that follows written.
package final class Session {
    let tty: Int32
    let wake: (read: Int32, write: Int32)
    let events: AsyncStream<Event>
    let post: AsyncStream<Event>.Continuation
    let reader: Reader
    var renderer = Renderer()
    var graphics: GraphicsWriter
    var thumbnails: Thumbnails
    var parser = InputParser()
    var keys = 0
    /// While the terminal's answers are awaited: the answers so far and the deadline.
    var asking: (replies: [Reply], until: ContinuousClock.Instant)?
    /// The answers so far when the deadline passed before DA1's: a late DA1 still chooses.
    var late: [Reply]?
    let insideTmux: Bool

    static let enter = "\u{1B}[?1049h\u{1B}[?25l\u{1B}[?7l\u{1B}[?1000h\u{1B}[?1006h\u{1B}[?2004h\u{1B}[2J"
    /// ST and CAN first: whatever sequence a frame cut short was in ends there.
    static let leave =
        "\u{1B}\\\u{18}\u{1B}[?2004l\u{1B}[?1006l\u{1B}[?1000l\u{1B}[?7h\u{1B}[0m\u{1B}[?25h\u{1B}[?1049l"

    /// Whether `read` can run here: its input and output a terminal.
    package static var isTerminal: Bool { isatty(STDIN_FILENO) == 1 && isatty(STDOUT_FILENO) == 1 }

    /// Runs the reader on the terminal until it quits: `pictures` as the option said (nil: find
    /// out). Throws `StoreError` when the store cannot be read at the start.
    package static func run(library: FeedSync, query: ListQuery, pictures: PictureProtocol?) async throws(StoreError) {
        let tty = open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY)
        guard tty >= 0 else { throw StoreError("the terminal (/dev/tty) cannot be opened") }
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { throw StoreError("no pipe for the reader's loop") }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        _ = setlocale(LC_CTYPE, "C.UTF-8")
        let environment = ProcessInfo.processInfo.environment
        let named = pictures ?? Detection.named(by: environment)
        let session = Session(
            tty: tty, wake: (ends[0], ends[1]), library: library, query: query, pictures: named ?? .blocks,
            insideTmux: environment["TMUX"] != nil)
        session.reader.chosenBy = pictures != nil ? "as asked" : named != nil ? "the terminal's name says" : "asking…"
        guard fs_terminal_enter(tty, enter, leave, ends[1]) == 0 else {
            throw StoreError("the terminal cannot be taken: \(String(cString: strerror(errno)))")
        }
        defer {
            session.write(session.graphics.farewell())
            fs_terminal_leave()
            close(tty)
        }
        session.measure()
        _ = await session.reader.restart(atEnd: false)
        session.draw()
        if named == nil { session.ask() }
        session.startInput()
        session.startPolling()
        session.prefetch()
        await session.loop()
    }

    init(
        tty: Int32, wake: (read: Int32, write: Int32), library: FeedSync, query: ListQuery,
        pictures: PictureProtocol, insideTmux: Bool
    ) {
        self.tty = tty
        self.wake = wake
        self.insideTmux = insideTmux
        (events, post) = AsyncStream.makeStream(of: Event.self, bufferingPolicy: .unbounded)
        reader = Reader(library: library, query: query, pictures: pictures)
        graphics = GraphicsWriter(kind: pictures, insideTmux: insideTmux)
        thumbnails = Thumbnails(library: library)
        reader.post = { [post] in post.yield($0) }
        reader.handOver = { [unowned self] body in self.handOver(body) }
    }

    /// The terminal's size, in cells and (when it says) pixels.
    func measure() {
        var size = winsize()
        guard ioctl(tty, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0, size.ws_row > 0 else { return }
        reader.width = Int(size.ws_col)
        reader.height = Int(size.ws_row)
        if size.ws_xpixel > 0, size.ws_ypixel > 0, asking == nil, reader.cellMeasured == false {
            reader.cell = (
                max(1, Int(size.ws_xpixel) / Int(size.ws_col)), max(1, Int(size.ws_ypixel) / Int(size.ws_row))
            )
        }
    }

    /// Asks the terminal what it shows; the answers come with the input, until DA1's or the deadline.
    func ask() {
        asking = ([], .now + .milliseconds(500))
        write(Detection.questions(insideTmux: insideTmux))
        let post = post
        Task {
            try? await Task.sleep(for: .milliseconds(510))
            post.yield(.flush)
        }
    }

    func answered(_ reply: Reply) {
        guard var waiting = asking ?? late.map({ ($0, ContinuousClock.now) }) else { return }
        waiting.replies.append(reply)
        if case .cellSize(let width, let height) = reply, width > 0, height > 0, width < 1000, height < 1000 {
            reader.cell = (width, height)
            reader.cellMeasured = true
        }
        if late != nil {
            // The answers after the deadline (a slow link, a loaded machine): still heard, and
            // their protocol taken once DA1's comes.
            late = waiting.replies.suffix(8)
            guard case .attributes = reply else { return }
            late = nil
            reader.chosenBy = "the terminal's answer says (late)"
            choose(Detection.chosen(by: waiting.replies, insideTmux: insideTmux))
            return
        }
        asking = waiting
        if case .attributes = reply { decide() }
    }

    /// The answers (or their absence by the deadline) choose the protocol.
    func decide() {
        guard let waiting = asking else { return }
        asking = nil
        let chosen = Detection.chosen(by: waiting.replies, insideTmux: insideTmux)
        let answered = waiting.replies.contains { if case .attributes = $0 { true } else { false } }
        reader.chosenBy = answered ? "the terminal's answer says" : "no answer came"
        if !answered { late = waiting.replies }
        choose(chosen)
    }

    func choose(_ kind: PictureProtocol) {
        var kind = kind
        if let missing = GraphicsWriter.missing(for: kind) {
            reader.message = missing
            kind = .blocks
        }
        reader.pictures = kind
        graphics = GraphicsWriter(kind: kind, insideTmux: insideTmux)
        thumbnails.clear()
        renderer.invalidate()
        draw()
        prefetch()
    }

    /// Reads the terminal and the wake pipe on a thread of its own (blocking reads).
    func startInput() {
        let (tty, wakeRead, post) = (tty, wake.read, post)
        let thread = Thread {
            var fds = [
                pollfd(fd: tty, events: Int16(POLLIN), revents: 0),
                pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0),
            ]
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                guard poll(&fds, 2, -1) >= 0 || errno == EINTR else { return }
                if fds[1].revents & Int16(POLLIN) != 0 {
                    let count = read(wakeRead, &buffer, buffer.count)
                    for byte in buffer.prefix(max(0, count)) { post.yield(.wake(byte)) }
                }
                if fds[0].revents & Int16(POLLIN | POLLHUP | POLLERR) != 0 {
                    let count = read(tty, &buffer, buffer.count)
                    if count == 0 || (count < 0 && errno != EINTR && errno != EAGAIN) {
                        // The terminal is gone: as a hang-up.
                        post.yield(.input([0x03]))
                        return
                    }
                    if count > 0 { post.yield(.input(Array(buffer.prefix(count)))) }
                }
            }
        }
        thread.start()
    }

    /// What a pull elsewhere added is counted every second.
    func startPolling() {
        let post = post
        Task.detached {
            while true {
                try? await Task.sleep(for: .seconds(1))
                post.yield(.poll)
            }
        }
    }

    func loop() async {
        for await event in events {
            await handle(event)
            if reader.quit { return }
        }
    }

    func handle(_ event: Event) async {
        switch event {
        case .input(let bytes):
            var inputs = parser.feed(bytes)
            if parser.isWaiting {
                let post = post
                Task {
                    try? await Task.sleep(for: .milliseconds(40))
                    post.yield(.flush)
                }
            }
            for input in inputs.indices {
                if case .reply(let reply) = inputs[input] {
                    answered(reply)
                    continue
                }
                if case .key(.control(0x1A)) = inputs[input] {
                    // Ctrl-Z: the whole group stops, as a shell expects (the handlers give the
                    // terminal back and take it again).
                    kill(0, SIGTSTP)
                    continue
                }
                await key(inputs[input])
                if reader.quit { return }
            }
            inputs.removeAll()
        case .flush:
            for input in parser.flush() { await key(input) }
            if let waiting = asking, ContinuousClock.now >= waiting.until { decide() }
        case .wake:
            measure()
            reader.relayout()
            renderer.invalidate()
            graphics.forget()
            draw()
        case .rest(let count):
            guard count == keys else { return }
            await reader.rest()
            draw()
            prefetch()
        case .poll:
            if (try? await reader.list.refreshCounts(reader.library)) == true { draw() }
        case .picture(let key, let entry):
            thumbnails.store(key, entry)
            draw()
        case .fetched(let number):
            reader.pictureCached(number)
            draw()
            prefetch()
        case .articlePictures(let number):
            await reader.reopen(number)
            draw()
            prefetch()
        case .pulled(let new, let failed):
            reader.pulling = false
            _ = try? await reader.list.refreshCounts(reader.library)
            reader.message = "pulled: \(new) new" + (failed ? "; some feeds failed (feedsync feeds says why)" : "")
            draw()
        }
    }

    /// A key: handled, the frame drawn; the pictures wait until the keys rest.
    func key(_ input: Input) async {
        let moved = await reader.handle(input)
        keys += 1
        if moved { reader.settled = false }
        draw()
        let (post, count) = (post, keys)
        Task {
            try? await Task.sleep(for: Reader.settle)
            post.yield(.rest(count))
        }
    }

    /// Writes the frame the reader's state makes: the text, then the pictures the terminal shows.
    func draw() {
        var (grid, boxes) = ReaderView.draw(reader)
        var placements: [Placement] = []
        for box in boxes {
            let key = thumbnails.key(for: box, protocol: reader.pictures, cell: reader.cell)
            switch thumbnails.entries[key] {
            case .ready(let pixels, let id, _)?
            where reader.settled || reader.pictures == .kitty || reader.pictures == .blocks:
                if reader.pictures == .blocks {
                    HalfBlocks.draw(pixels, into: &grid, row: box.row, column: box.column)
                } else if reader.pictures != .none {
                    for row in box.row..<box.row + box.rows {
                        grid.fill(row: row, column: box.column, count: box.columns)
                    }
                    placements.append(
                        Placement(id: id, row: box.row, column: box.column, columns: box.columns, rows: box.rows))
                }
            case .failed?:
                grid.put("×", row: box.row + box.rows / 2, column: box.column + box.columns / 2, style: ReaderView.dim)
            default:
                if reader.pictures != .none {
                    grid.put(
                        "···", row: box.row + box.rows / 2, column: box.column + (box.columns - 3) / 2,
                        style: ReaderView.dim)
                }
            }
        }
        let thumbnails = thumbnails
        let update = graphics.update(placements, width: grid.width) { placement in
            thumbnails.payload(of: placement.id)
        }
        write(renderer.frame(grid, graphics: update.bytes, protected: update.protected, dirty: update.dirty))
    }

    /// Asks for the pictures of the boxes on screen, once the cursor rests: decoded from the
    /// cache, or (not cached yet) fetched through the process's one prefetcher first.
    func prefetch() {
        guard reader.settled, reader.pictures != .none else { return }
        let boxes = ReaderView.draw(reader).boxes
        for box in boxes {
            let key = thumbnails.key(for: box, protocol: reader.pictures, cell: reader.cell)
            guard thumbnails.entries[key] == nil else { continue }
            let cached = box.inside != nil || reader.list.rows.first { $0.number == box.item }?.imageStatus == .cached
            if cached {
                thumbnails.load(key, kind: graphics, post: post)
            } else if !thumbnails.fetching.contains(box.item) {
                thumbnails.fetching.insert(box.item)
                let (library, post, number) = (reader.library, post, box.item)
                Task {
                    if await library.fetchPicture(ofItem: number) { post.yield(.fetched(number)) }
                }
            }
        }
        thumbnails.trim(
            keeping: Set(boxes.map { thumbnails.key(for: $0, protocol: reader.pictures, cell: reader.cell) }))
    }

    /// Gives the terminal to `body` (a browser) and takes it back.
    func handOver(_ body: () -> Bool) -> Bool {
        fs_terminal_suspend()
        let result = body()
        fs_terminal_resume()
        renderer.invalidate()
        graphics.forget()
        return result
    }

    func write(_ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { Foundation.write(tty, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0, errno == EINTR { continue }
            guard written > 0 else { return }
            offset += written
        }
    }
}
