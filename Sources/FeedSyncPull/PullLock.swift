import FeedSyncModel
import Foundation

/// One pull per data home: an exclusive `flock` on `pull.lock`, released when the process ends
/// however it ends (the kernel drops it with the descriptor).
public final class PullLock: Sendable {
    private let descriptor: Int32

    /// Takes the lock or fails at once, naming the process that holds it.
    public init(path: String) throws(SyncError) {
        // O_NOFOLLOW: a link planted at the name must not make us create or truncate a file elsewhere.
        let fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            throw SyncError(.local, "cannot open the lock file \(path): \(String(cString: strerror(errno)))")
        }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            var buffer = [UInt8](repeating: 0, count: 32)
            let count = pread(fd, &buffer, buffer.count, 0)
            let holder = String(decoding: buffer.prefix(max(0, count)), as: UTF8.self)
                .trimmingCharacters(in: .whitespacesAndNewlines)
            close(fd)
            throw SyncError(
                .transient,
                "another pull is running in this data home\(holder.isEmpty ? "" : " (pid \(holder))"); "
                    + "try again when it has finished"
            )
        }
        let pid = "\(getpid())\n"
        ftruncate(fd, 0)
        _ = pid.withCString { pwrite(fd, $0, strlen($0), 0) }
        descriptor = fd
    }

    deinit {
        close(descriptor)
    }
}
