import CCurl
internal import CFeedSyncSystem
import FeedSyncModel
import Foundation

/// Owns one libcurl multi handle and the one thread that drives it. Every libcurl call on an easy
/// handle that has been submitted happens on that thread; other threads only touch `inbox` under
/// `lock` and, when the thread sleeps in `curl_multi_poll`, wake it with `curl_multi_wakeup`,
/// which libcurl allows from any thread. They wake it while they hold `lock` and only while it is
/// not stopping, so a wakeup never meets a multi handle the loop has cleaned up.
final class CurlLoop: @unchecked Sendable {
    private let configuration: TransportConfiguration
    private let multi: UnsafeMutableRawPointer?
    /// Why this loop cannot run transfers at all (libcurl is missing), or nil.
    private let unavailable: String?
    private let lock = NSLock()
    // Guarded by `lock`.
    private var inbox: [Transfer] = []
    private var cancellations: [Transfer] = []
    private var withdrawals: [Transfer] = []
    private var stopping = false
    /// The loop thread is in, or about to enter, `curl_multi_poll` and must be woken. A busy loop
    /// finds new work when it comes round: a wakeup per request cost a socket write and a read.
    private var sleeping = false
    // Touched only on the loop thread.
    private var active: [UnsafeMutableRawPointer: Transfer] = [:]
    /// Easy handles of ended transfers, reset (every option cleared), for the next ones, as
    /// libcurl recommends: creating and cleaning up one per transfer cost CPU on every picture.
    private var idle: [UnsafeMutableRawPointer] = []
    private static let idleLimit = 32
    /// The longest `curl_multi_poll` sleeps with nothing to do, in milliseconds: an hour, as
    /// anything that arrives wakes it; a second where this libcurl cannot be woken.
    private let idlePoll: Int32

    /// Loads libcurl once per process; what failed, or nil.
    static let loadFailure: String? = fs_curl_load().map { String(cString: $0) }

    init(configuration: TransportConfiguration) {
        self.configuration = configuration
        if let failure = Self.loadFailure {
            multi = nil
            unavailable = "libcurl could not be loaded (\(failure)); install Debian's libcurl4 package"
            stopping = true
            idlePoll = 1000
            return
        }
        unavailable = nil
        multi = fs_multi_init()
        // The loop's first poll returns at once for this wakeup, which shows whether one works.
        idlePoll = fs_multi_wakeup(multi) == CURLM_OK ? 3_600_000 : 1000
        fs_multi_setopt_long(multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, configuration.maxConnections)
        fs_multi_setopt_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, configuration.maxHostConnections)
        fs_multi_setopt_long(multi, CURLMOPT_PIPELINING, Int(CURLPIPE_MULTIPLEX))
        // Keep every connection the limit allows open between transfers: libcurl's default cache
        // follows the number of transfers added, and closed connections that were reopened a
        // moment later.
        fs_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, configuration.maxConnections)
        let thread = Thread { [self] in run() }
        thread.name = "feedsync.curl"
        thread.start()
    }

    func perform(_ request: HTTPRequest) async -> Result<HTTPResponse, TransportError> {
        let transfer = Transfer(request: request)
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                transfer.done = { continuation.resume(returning: $0) }
                submit(transfer)
            }
        } onCancel: {
            lock.lock()
            transfer.cancelRequested = true
            if !stopping { cancellations.append(transfer) }  // else shutdown ends it
            wakeIfSleeping()
            lock.unlock()
        }
    }

    /// Starts `request`, within `lane`'s limit; `done` is called once, on the loop thread, when it ends.
    func start(
        _ request: HTTPRequest, lane: HTTPLane?,
        done: @escaping @Sendable (Result<HTTPResponse, TransportError>) -> Void
    ) -> Transfer {
        let transfer = Transfer(request: request)
        transfer.lane = lane
        transfer.done = done
        submit(transfer)
        return transfer
    }

    /// Ends `transfer` as cancelled if it is still waiting for a place in its lane.
    func withdraw(_ transfer: Transfer) {
        lock.lock()
        if !stopping { withdrawals.append(transfer) }  // else shutdown ends it
        wakeIfSleeping()
        lock.unlock()
    }

    private func submit(_ transfer: Transfer) {
        lock.lock()
        let refused = stopping
        if !refused { inbox.append(transfer) }
        wakeIfSleeping()
        lock.unlock()
        if let unavailable {
            transfer.finish(.failure(transfer.error(.other, unavailable)))
        } else if refused {
            transfer.finish(.failure(transfer.error(.cancelled, "the client was shut down")))
        }
    }

    func shutdown() {
        lock.lock()
        if !stopping, multi != nil { fs_multi_wakeup(multi) }
        stopping = true
        lock.unlock()
    }

    /// Wakes the loop thread if it sleeps, or is about to, in `curl_multi_poll`; the first caller
    /// wakes it. Under `lock`.
    private func wakeIfSleeping() {
        guard sleeping, !stopping else { return }
        sleeping = false
        fs_multi_wakeup(multi)
    }

    // MARK: The loop thread

    private func run() {
        var running: Int32 = 0
        while true {
            lock.lock()
            let arrived = inbox.map { ($0, $0.cancelRequested) }
            let cancelled = cancellations
            let withdrawn = withdrawals
            let stop = stopping
            inbox.removeAll()
            cancellations.removeAll()
            withdrawals.removeAll()
            lock.unlock()

            for (transfer, cancelRequested) in arrived {
                if cancelRequested {
                    transfer.finish(.failure(transfer.error(.cancelled, "cancelled")))
                } else if let lane = transfer.lane, lane.active >= lane.limit {
                    lane.waiting.append(transfer)
                } else {
                    start(transfer)
                }
            }
            for transfer in cancelled { abort(transfer, detail: "cancelled") }
            // One libcurl holds back for a connection (at most `maxHostConnections` to its host)
            // has not reached the server either.
            for transfer in withdrawn where transfer.easy == nil || !transfer.wasSent {
                abort(transfer, detail: "withdrawn before it started")
            }
            if stop { break }

            fs_multi_perform(multi, &running)
            collectFinished()
            // Sleep only if nothing arrived meanwhile; whatever arrives from now on wakes the poll
            // (a wakeup sent before it starts makes it return at once).
            lock.lock()
            sleeping = inbox.isEmpty && cancellations.isEmpty && withdrawals.isEmpty && !stopping
            let sleep = sleeping
            lock.unlock()
            if sleep {
                // As long as nothing arrives: libcurl shortens the wait to its own next timeout
                // while transfers run, and an idle client (serve's between pulls) must not tick.
                fs_multi_poll(multi, idlePoll)
                lock.lock()
                sleeping = false
                lock.unlock()
            }
        }
        // A lane with transfers waiting has its `limit` running, so the running ones lead to all
        // of them. The waiting go first, so ending the running starts none of them. (Nothing
        // arrives any more: `stopping` refuses new transfers.)
        var lanes: [ObjectIdentifier: HTTPLane] = [:]
        for case let lane? in active.values.map(\.lane) { lanes[ObjectIdentifier(lane)] = lane }
        for transfer in lanes.values.flatMap(\.waiting) + Array(active.values) {
            abort(transfer, detail: "the client was shut down")
        }
        idle.forEach(fs_easy_cleanup)
        fs_multi_cleanup(multi)
    }

    private func start(_ transfer: Transfer) {
        guard let easy = idle.popLast() ?? fs_easy_init() else {
            transfer.finish(.failure(transfer.error(.other, "libcurl could not create a transfer")))
            return
        }
        transfer.easy = easy
        transfer.lane?.active += 1
        configure(easy, for: transfer)
        active[easy] = transfer
        if fs_multi_add_handle(multi, easy) != CURLM_OK {
            release(transfer)
            transfer.finish(.failure(transfer.error(.other, "libcurl could not start the transfer")))
        }
    }

    private func configure(_ easy: UnsafeMutableRawPointer, for transfer: Transfer) {
        let request = transfer.request
        let config = configuration
        fs_easy_setopt_string(easy, CURLOPT_URL, request.url)
        fs_easy_setopt_long(easy, CURLOPT_NOSIGNAL, 1)
        fs_easy_setopt_long(easy, CURLOPT_BUFFERSIZE, 100 * 1024)  // as the curl tool: a picture in fewer reads
        fs_easy_setopt_string(easy, CURLOPT_PROTOCOLS_STR, "http,https")
        fs_easy_setopt_string(easy, CURLOPT_REDIR_PROTOCOLS_STR, "http,https")
        fs_easy_setopt_long(easy, CURLOPT_FOLLOWLOCATION, 1)
        fs_easy_setopt_long(easy, CURLOPT_MAXREDIRS, 5)
        fs_easy_setopt_string(easy, CURLOPT_ACCEPT_ENCODING, "")
        fs_easy_setopt_long(easy, CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_2TLS))
        fs_easy_setopt_string(easy, CURLOPT_USERAGENT, config.userAgent)
        fs_easy_setopt_long(easy, CURLOPT_CONNECTTIMEOUT, config.connectTimeout)
        fs_easy_setopt_long(easy, CURLOPT_LOW_SPEED_LIMIT, config.lowSpeedBytes)
        fs_easy_setopt_long(easy, CURLOPT_LOW_SPEED_TIME, config.lowSpeedSeconds)
        fs_easy_setopt_long(easy, CURLOPT_TIMEOUT, config.totalTimeout)
        // libcurl 7.88 ignores this for chunked bodies; the write callback enforces the cap too.
        fs_easy_setopt_off(easy, CURLOPT_MAXFILESIZE_LARGE, curl_off_t(request.maxBodyBytes))
        if let body = request.body {
            // libcurl copies the bytes at once (COPYPOSTFIELDS): the request need not outlive this.
            fs_easy_setopt_off(easy, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(body.count))
            body.withUnsafeBytes { bytes in
                fs_easy_setopt_pointer(
                    easy, CURLOPT_COPYPOSTFIELDS, UnsafeMutableRawPointer(mutating: bytes.baseAddress))
            }
        }

        var list: UnsafeMutablePointer<curl_slist>? = nil
        for header in request.headers {
            list = fs_slist_append(list, "\(header.name): \(header.value)")
        }
        transfer.headerList = list
        if let list { fs_easy_setopt_slist(easy, CURLOPT_HTTPHEADER, list) }

        // The transfer is kept alive by `active`; callbacks and CURLINFO_PRIVATE get it back.
        let context = Unmanaged.passUnretained(transfer).toOpaque()
        fs_easy_setopt_pointer(easy, CURLOPT_PRIVATE, context)
        fs_easy_setopt_pointer(easy, CURLOPT_WRITEDATA, context)
        fs_easy_setopt_write_callback(easy, CURLOPT_WRITEFUNCTION, curlWriteBody)
        fs_easy_setopt_pointer(easy, CURLOPT_HEADERDATA, context)
        fs_easy_setopt_write_callback(easy, CURLOPT_HEADERFUNCTION, curlWriteHeader)
    }

    private func collectFinished() {
        var queued: Int32 = 0
        while let message = fs_multi_info_read(multi, &queued) {
            guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle else { continue }
            let code = fs_msg_result(message)
            var context: UnsafeMutableRawPointer? = nil
            fs_easy_getinfo_pointer(easy, CURLINFO_PRIVATE, &context)
            guard let context else { continue }
            let transfer = Unmanaged<Transfer>.fromOpaque(context).takeUnretainedValue()
            let result: Result<HTTPResponse, TransportError>
            if code == CURLE_OK, transfer.headersComplete {
                var status = 0
                fs_easy_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &status)
                var effective: UnsafeMutablePointer<CChar>? = nil
                fs_easy_getinfo_string(easy, CURLINFO_EFFECTIVE_URL, &effective)
                result = .success(
                    HTTPResponse(
                        status: status, headers: transfer.headers, body: transfer.body,
                        effectiveURL: effective.map { String(cString: $0) } ?? transfer.request.url,
                        bodyFile: transfer.closeSpill() ? transfer.request.spill?.path : nil,
                        bodyBytes: transfer.received, redirects: transfer.redirects,
                        bodyHash: transfer.request.hashesBody ? transfer.bodyHash : nil))
            } else {
                // libcurl reports a connection closed inside the header block as a whole response.
                result = .failure(
                    code == CURLE_OK
                        ? transfer.error(.interrupted, "the connection closed in the middle of the response's headers")
                        : transfer.error(for: code, connectTimeout: configuration.connectTimeout))
                if transfer.closeSpill(), let path = transfer.request.spill?.path { unlink(path) }
            }
            release(transfer)
            transfer.finish(result)
        }
    }

    /// Ends a transfer as cancelled: a running one, or one waiting in its lane; one not arrived
    /// yet is ended when it arrives.
    private func abort(_ transfer: Transfer, detail: String) {
        if transfer.easy == nil, let lane = transfer.lane,
            let index = lane.waiting.firstIndex(where: { $0 === transfer })
        {
            lane.waiting.remove(at: index)
            transfer.finish(.failure(transfer.error(.cancelled, detail)))
            return
        }
        guard let easy = transfer.easy, active[easy] != nil else { return }
        release(transfer)
        if transfer.closeSpill(), let path = transfer.request.spill?.path { unlink(path) }
        transfer.finish(.failure(transfer.error(.cancelled, detail)))
    }

    /// Ends a running transfer's handle and starts the next one waiting in its lane, if any.
    private func release(_ transfer: Transfer) {
        guard let easy = transfer.easy else { return }
        active[easy] = nil
        fs_multi_remove_handle(multi, easy)
        if idle.count < Self.idleLimit {
            fs_easy_reset(easy)
            idle.append(easy)
        } else {
            fs_easy_cleanup(easy)
        }
        fs_slist_free_all(transfer.headerList)
        transfer.headerList = nil
        transfer.easy = nil
        if let lane = transfer.lane {
            lane.active -= 1
            // A loop: a transfer that cannot start is ended at once and leaves its place free.
            while lane.active < lane.limit, !lane.waiting.isEmpty { start(lane.waiting.removeFirst()) }
        }
    }
}

/// One request in flight. After submission it is touched only on the loop thread.
final class Transfer: @unchecked Sendable {
    let request: HTTPRequest
    /// Called once with the outcome, then dropped.
    var done: (@Sendable (Result<HTTPResponse, TransportError>) -> Void)?
    var easy: UnsafeMutableRawPointer?
    var lane: HTTPLane?
    var headerList: UnsafeMutablePointer<curl_slist>?
    var headers: [String: String] = [:]
    /// The status of the response whose headers are arriving, and the redirects before it.
    var status = 0
    var redirects: [HTTPRedirect] = []
    var body = Data()
    /// XXH3's state over the body so far, with `HTTPRequest.hashesBody`, from its first bytes.
    var hash: UnsafeMutableRawPointer?
    /// Bytes of the body received so far, in memory or in the spill file.
    var received = 0
    /// `received` when `request.onProgress` was last told.
    var reported = 0
    /// The spill file, once the body outgrew memory.
    var spillFile: Int32 = -1
    var spillFailed = false
    var exceededCap = false
    /// The blank line that ends the response's header block arrived: a connection closed before
    /// it sent half a response, which libcurl may report as a complete one with an empty body.
    var headersComplete = false
    var finished = false
    /// Set under the loop's lock by the cancelling task.
    var cancelRequested = false

    init(request: HTTPRequest) {
        self.request = request
    }

    deinit {
        if let hash { fs_hash64_free(hash) }
    }

    /// libcurl has sent the request (or is sending it): false while the transfer waits for a
    /// connection.
    var wasSent: Bool {
        guard let easy else { return false }
        var sentAfter: curl_off_t = 0
        return fs_easy_getinfo_off(easy, CURLINFO_PRETRANSFER_TIME_T, &sentAfter) != CURLE_OK || sentAfter > 0
    }

    /// XXH3-64 of the body and its length; nil when there was no memory for the hash.
    var bodyHash: String? {
        guard let digest = received == 0 ? fs_hash64(nil, 0) : hash.map({ fs_hash64_digest($0) }) else { return nil }
        let hex = String(digest, radix: 16)
        return "xxh3:" + String(repeating: "0", count: 16 - hex.count) + hex + ":\(received)"
    }

    /// A new response begins (`line`: its status line): the one before it was a redirect when it
    /// had a 3xx status and a `Location`, which libcurl follows; it is noted with its target made
    /// absolute.
    func beginResponse(_ line: UnsafeBufferPointer<UInt8>) {
        if (300...399).contains(status), let location = headers["location"] {
            let from = redirects.last?.url ?? request.url
            let target = URL(string: location, relativeTo: URL(string: from))?.absoluteString ?? location
            redirects.append(HTTPRedirect(status: status, url: target))
        }
        // "HTTP/1.1 301 Moved", "HTTP/2 308": the three digits after the first space.
        let digits = line.drop { $0 != 0x20 }.dropFirst().prefix(3)
        status =
            digits.count == 3 && digits.allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
            ? Int(String(decoding: digits, as: UTF8.self))! : 0
        headers.removeAll()  // a new response after a redirect or a 100 Continue
        headersComplete = false
    }

    func finish(_ result: Result<HTTPResponse, TransportError>) {
        guard !finished else { return }
        finished = true
        done?(result)
        done = nil
    }

    /// Takes `length` more bytes of body: into memory, or into the spill file once the body is
    /// longer than the request allows in memory. `false` when the file cannot be written.
    func append(_ bytes: UnsafePointer<UInt8>, count length: Int) -> Bool {
        received += length
        if spillFile < 0, let spill = request.spill, received > spill.above {
            // Created anew, never opened through whatever is at the path: a link planted there
            // would send the body to a file outside the data home.
            unlink(spill.path)
            spillFile = open(spill.path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
            if spillFile < 0 { spillFailed = true }
            guard spillFile >= 0, body.withUnsafeBytes({ write(all: $0) }) else { return false }
            body = Data()
        }
        guard spillFile >= 0 else {
            body.append(bytes, count: length)
            return true
        }
        return write(all: UnsafeRawBufferPointer(start: bytes, count: length))
    }

    private func write(all buffer: UnsafeRawBufferPointer) -> Bool {
        var offset = 0
        while offset < buffer.count {
            let written = Glibc.write(spillFile, buffer.baseAddress! + offset, buffer.count - offset)
            if written < 0, errno == EINTR { continue }
            guard written > 0 else {
                spillFailed = true
                return false
            }
            offset += written
        }
        return true
    }

    /// Closes the spill file; `true` when there was one.
    func closeSpill() -> Bool {
        guard spillFile >= 0 else { return false }
        close(spillFile)
        spillFile = -1
        return true
    }

    func error(_ kind: TransportError.Kind, _ detail: String, noAnswer: TransportError.NoAnswer? = nil)
        -> TransportError
    {
        // A redirect's status line is no answer: its target never answered.
        TransportError(
            kind: kind, url: request.url, detail: detail, answered: status >= 100 && !(300...399).contains(status),
            noAnswer: noAnswer)
    }

    /// How the server gave no answer, when libcurl's `code` says it gave none: no name, no
    /// connection (refused, unreachable, or none within `connectTimeout` seconds), or a connection
    /// closed before any byte of a response. A connection made and then silent is a slow server,
    /// and a redirect that was answered shows the network is there, wherever it led.
    private func noAnswer(for code: CURLcode, connectTimeout: Int) -> TransportError.NoAnswer? {
        guard status == 0, let easy else { return nil }
        var osError = 0
        fs_easy_getinfo_long(easy, CURLINFO_OS_ERRNO, &osError)
        switch code {
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY: return .noSuchHost
        case CURLE_COULDNT_CONNECT:
            return osError == ECONNREFUSED
                ? .refused : osError == ETIMEDOUT ? .timedOut(seconds: connectTimeout) : .unreachable
        case CURLE_OPERATION_TIMEDOUT: return wasSent ? nil : .timedOut(seconds: connectTimeout)
        case CURLE_GOT_NOTHING, CURLE_RECV_ERROR, CURLE_SEND_ERROR: return .closed
        default: return nil
        }
    }

    func error(for code: CURLcode, connectTimeout: Int) -> TransportError {
        let text = String(cString: fs_easy_strerror(code))
        let noAnswer = noAnswer(for: code, connectTimeout: connectTimeout)
        if exceededCap || code == CURLE_FILESIZE_EXCEEDED {
            return error(.tooLarge, "the body is larger than \(request.maxBodyBytes) bytes")
        }
        if spillFailed {
            return error(
                .localFile,
                "cannot write the body to \(request.spill?.path ?? "its file"): \(String(cString: strerror(errno)))")
        }
        switch code {
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY, CURLE_COULDNT_CONNECT:
            return error(.unreachable, text, noAnswer: noAnswer)
        case CURLE_OPERATION_TIMEDOUT:
            return error(.timedOut, text, noAnswer: noAnswer)
        case CURLE_PARTIAL_FILE, CURLE_RECV_ERROR, CURLE_SEND_ERROR, CURLE_GOT_NOTHING,
            CURLE_HTTP2, CURLE_HTTP2_STREAM:
            return error(.interrupted, text, noAnswer: noAnswer)
        case CURLE_UNSUPPORTED_PROTOCOL, CURLE_TOO_MANY_REDIRECTS, CURLE_URL_MALFORMAT:
            return error(.refusedRedirect, text)
        default:
            return error(.other, text)
        }
    }
}

// C callbacks: libcurl hands back the Transfer as the opaque user pointer. They run on the loop thread.

private let curlWriteBody: curl_write_callback = { data, size, count, context in
    let transfer = Unmanaged<Transfer>.fromOpaque(context!).takeUnretainedValue()
    let length = size * count
    if transfer.received + length > transfer.request.maxBodyBytes {
        transfer.exceededCap = true
        return 0  // makes libcurl fail the transfer with CURLE_WRITE_ERROR
    }
    guard let data else { return length }
    if transfer.request.hashesBody, length > 0 {
        // XXH3, about 30 GB/s, on the loop's thread, which a byte-at-a-time hash held for about 1 % of
        // a 34 MB document's pull.
        if transfer.hash == nil { transfer.hash = fs_hash64_start() }
        if let hash = transfer.hash { fs_hash64_add(hash, data, length) }
    }
    let kept = data.withMemoryRebound(to: UInt8.self, capacity: length) { transfer.append($0, count: length) }
    if let onProgress = transfer.request.onProgress, transfer.received - transfer.reported >= HTTPRequest.progressStep {
        transfer.reported = transfer.received
        onProgress(transfer.received)
    }
    return kept ? length : 0
}

private let curlWriteHeader: curl_write_callback = { data, size, count, context in
    let transfer = Unmanaged<Transfer>.fromOpaque(context!).takeUnretainedValue()
    let length = size * count
    guard let data else { return length }
    let line = UnsafeRawBufferPointer(start: data, count: length).bindMemory(to: UInt8.self)
    if line.starts(with: "HTTP/".utf8) {
        transfer.beginResponse(line)
    } else if line.allSatisfy({ $0 == 0x0D || $0 == 0x0A }) {
        transfer.headersComplete = true
        // Room for the body at once, as long as it says, up to what the request keeps in memory
        // and 1 MiB, so a body is not copied as it grows (a picture, in one piece).
        if let length = transfer.headers["content-length"].flatMap(Int.init), length > 0, transfer.body.isEmpty {
            let keeps = min(transfer.request.spill.map { $0.above + 1 } ?? transfer.request.maxBodyBytes, 1 << 20)
            transfer.body.reserveCapacity(min(length, keeps))
        }
    } else if let colon = line.firstIndex(of: UInt8(ascii: ":")) {
        func text(_ part: Slice<UnsafeBufferPointer<UInt8>>) -> String {
            let blank: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 || $0 == 0x0D || $0 == 0x0A }
            guard let first = part.firstIndex(where: { !blank($0) }) else { return "" }
            return String(decoding: part[first...(part.lastIndex(where: { !blank($0) })!)], as: UTF8.self)
        }
        transfer.headers[text(line[..<colon]).lowercased()] = text(line[(colon + 1)...])
    }
    return length
}
