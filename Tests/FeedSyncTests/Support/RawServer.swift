import FeedSyncModel
import Foundation
import Synchronization

/// A TCP server on 127.0.0.1 that answers every connection with the same bytes, whatever was
/// asked, then closes it (or resets it): for responses no HTTP server library would send, such as
/// half a header block.
final class RawServer: Sendable {
    let port: UInt16
    private let listener: Int32
    private let stopped = Flag()

    private final class Flag: Sendable {
        let value = Mutex(false)
    }

    init(answer: Data, reset: Bool = false) throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.listener = listener
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, length) == 0 && listen(listener, 16) == 0 && getsockname(listener, $0, &length) == 0
            }
        }
        guard bound else { throw POSIXError(.EADDRINUSE) }
        port = UInt16(bigEndian: address.sin_port)
        let stopped = stopped
        Thread {
            while !stopped.value.withLock({ $0 }) {
                let connection = accept(listener, nil, nil)
                guard connection >= 0 else { continue }
                var buffer = [UInt8](repeating: 0, count: 65536)
                _ = recv(connection, &buffer, buffer.count, 0)
                answer.withUnsafeBytes { _ = send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                if reset {
                    var linger = linger(l_onoff: 1, l_linger: 0)
                    setsockopt(connection, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<linger>.size))
                }
                close(connection)
            }
        }.start()
    }

    var url: String { "http://127.0.0.1:\(port)/feed" }

    func stop() {
        stopped.value.withLock { $0 = true }
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }
}
