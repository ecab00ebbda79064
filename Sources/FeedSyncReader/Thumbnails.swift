import FeedSyncKit
import Foundation

/// The pictures the reader has decoded (and encoded for the terminal), each at the size of its
/// box, the most recent `kept` of them: memory stays flat however far the reader scrolls.
package struct Thumbnails {
    package struct Key: Hashable, Sendable {
        package var item: Int64
        package var inside: Int?
        package var columns, rows: Int
        /// The pixels it is decoded to.
        package var width, height: Int
    }

    package enum Entry: Sendable {
        case loading
        /// Its pixels, its id for the terminal, the bytes that draw it (kitty, iTerm2, sixel).
        case ready(Pixels, UInt32, [UInt8]?)
        /// Nothing to show: damaged, too large, not a kind decoded here.
        case failed
    }

    let library: FeedSync
    package private(set) var entries: [Key: Entry] = [:]
    private var order: [Key] = []
    private var payloads: [UInt32: [UInt8]] = [:]
    private var nextID: UInt32 = 1
    /// Items whose pictures were asked of the prefetcher this session.
    var fetching: Set<Int64> = []
    static let kept = 200

    init(library: FeedSync) { self.library = library }

    /// The key of `box`'s picture as `kind` draws it: half blocks have two pixels a cell.
    func key(for box: ReaderView.Box, protocol kind: PictureProtocol, cell: (width: Int, height: Int)) -> Key {
        let blocks = kind == .blocks
        return Key(
            item: box.item, inside: box.inside, columns: box.columns, rows: box.rows,
            width: box.columns * (blocks ? 1 : cell.width), height: box.rows * (blocks ? 2 : cell.height))
    }

    func payload(of id: UInt32) -> [UInt8]? { payloads[id] }

    /// Decodes (and encodes) `key`'s picture on a task of its own; `post` hears when it is done.
    mutating func load(_ key: Key, kind: GraphicsWriter, post: AsyncStream<Event>.Continuation) {
        entries[key] = .loading
        order.append(key)
        let id = nextID
        nextID &+= 1
        let (library, protocolKind, tmux) = (library, kind.kind, kind.insideTmux)
        Task.detached {
            let decoded = await library.pixels(
                ofItem: key.item, inside: key.inside, width: key.width, height: key.height, fill: key.inside == nil)
            guard case .success(let pixels)? = decoded else {
                post.yield(.picture(key, .failed))
                return
            }
            let placement = Placement(id: id, row: 0, column: 0, columns: key.columns, rows: key.rows)
            let payload = GraphicsWriter.payload(pixels, for: placement, kind: protocolKind, insideTmux: tmux)
            post.yield(.picture(key, .ready(pixels, id, payload)))
        }
    }

    mutating func store(_ key: Key, _ entry: Entry) {
        guard entries[key] != nil else { return }
        entries[key] = entry
        if case .ready(_, let id, let payload?) = entry { payloads[id] = payload }
    }

    /// Forgets the oldest beyond `kept`, never one on screen.
    mutating func trim(keeping visible: Set<Key>) {
        var index = 0
        while entries.count > Self.kept, index < order.count {
            let key = order[index]
            if visible.contains(key) {
                index += 1
                continue
            }
            order.remove(at: index)
            if case .ready(_, let id, _)? = entries.removeValue(forKey: key) { payloads[id] = nil }
        }
    }

    mutating func clear() {
        entries = [:]
        order = []
        payloads = [:]
    }
}
