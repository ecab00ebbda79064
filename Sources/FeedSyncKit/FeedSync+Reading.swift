import FeedSyncImages
import FeedSyncModel
import Foundation

// The reading use cases, one call each for every front end (the command line, the reading page,
// the terminal reader): a page of a list and an item as a reader is shown them, where the reader
// is, which folder a name means, where an interrupted pull goes on.

extension FeedSync {
    /// A page of `query`'s list as a reader is shown it: each cached picture checked as every read
    /// is (one whose file fails is due again: `.pending`, no `picturePath`), its file in
    /// `picturePath`. With `recordingPosition` the page becomes where the reader is, when the
    /// picture window can follow it there: a list with no filter, a page that exists. Failing to
    /// note the position does not fail the listing.
    public func readerPage(_ query: ListQuery, page: Int, perPage: Int, recordingPosition: Bool)
        async throws(StoreError)
        -> ListedPage
    {
        var listed = try await list(query, page: page, perPage: perPage)
        if recordingPosition, !query.isFiltered, page <= listed.pages(perPage: perPage) {
            try? await setReadingPosition(ReadingPosition(feedURL: query.feedURL, page: page, perPage: perPage))
        }
        for index in listed.items.indices { await checkPicture(of: &listed.items[index]) }
        return listed
    }

    /// Up to `limit` rows of `query`'s list after `key` (nil: from the top), or with
    /// `backwards` before it (nil: from the end), nearest first, as a reader is shown them (each
    /// picture checked as `readerPage`'s are): what an endless list reads ahead of its cursor,
    /// a seek however deep it is (`Store.rows`).
    public func readerRows(_ query: ListQuery, after key: ListKey?, backwards: Bool = false, limit: Int)
        async throws(StoreError) -> [StoredItem]
    {
        var rows = try await store.rows(query, after: key, backwards: backwards, limit: limit)
        for index in rows.indices { await checkPicture(of: &rows[index]) }
        return rows
    }

    /// How many items `query`'s list holds.
    public func total(of query: ListQuery) async throws(StoreError) -> Int { try await store.total(query) }

    /// How many of `query`'s items have come before `key` (new items above where a reader is),
    /// counted up to `cap`.
    public func count(of query: ListQuery, before key: ListKey, cap: Int) async throws(StoreError) -> Int {
        try await store.count(query, before: key, cap: cap)
    }

    /// Item `number`'s cached picture, or the one at `position` inside its article, as pixels
    /// of a `width` × `height` box: covering it with `fill` (a thumbnail), else fitting in it. Read
    /// as the cache checks every read, then decoded within bounds set before any pixel is
    /// (`PictureDecoder`); nil when none is cached, a failure saying why one shows nothing.
    public func pixels(ofItem number: Int64, inside position: Int? = nil, width: Int, height: Int, fill: Bool)
        async -> Result<Pixels, PictureFailure>?
    {
        guard let picture = try? await picture(ofItem: number, inside: position) else { return nil }
        return PictureDecoder.decode(picture.data, width: width, height: height, fill: fill)
    }

    /// Item `number` whole as a reader is shown it: its own picture and its article's checked as
    /// every read is (`picturePath`, each picture's `path`; `.pending` where a file failed). Nil
    /// when there is no such item.
    public func readerItem(number: Int64) async throws(StoreError) -> ItemDetail? {
        guard var detail = try await store.item(number: number) else { return nil }
        await checkPicture(of: &detail.item)
        for index in detail.pictures.indices {
            let path = await picturePath(detail.pictures[index].cached)
            if detail.pictures[index].cached != nil, path == nil { detail.pictures[index].status = .pending }
            detail.pictures[index].path = path
        }
        return detail
    }

    private func checkPicture(of item: inout StoredItem) async {
        let path = await picturePath(item.image)
        if item.image != nil, path == nil { item.imageStatus = .pending }
        item.picturePath = path
    }

    /// Where a reader's scroll settled: the row (0-based) first in view of `query`'s list, in pages
    /// of `perPage`. It becomes the reading position when the picture window can follow it there
    /// (a list with no filter); the position recorded, else nil.
    public func recordReadingPosition(in query: ListQuery, row: Int, perPage: Int) async throws(StoreError)
        -> ReadingPosition?
    {
        guard !query.isFiltered else { return nil }
        let position = ReadingPosition(feedURL: query.feedURL, page: row / perPage + 1, perPage: perPage)
        try await setReadingPosition(position)
        return position
    }

    /// What a folder named on the command line is.
    public enum FolderMatch: Sendable, Equatable {
        case found(String)
        /// None is so named; the folders there are.
        case none(folders: [String])
        /// Several folders have that name (in folders of their own); their paths.
        case ambiguous([String])
    }

    /// The folder `name` names: a folder's path (`Tech/Swift`, letter case aside: it and the
    /// folders inside it), else the name of one folder wherever it is (`Swift`).
    public func folder(named name: String) async throws(StoreError) -> FolderMatch {
        let paths = Set(try await store.feeds().compactMap(\.folder))
        // Every folder, the ones that hold only folders too.
        let folders = Set(
            paths.flatMap { path in
                let parts = path.split(separator: "/")
                return parts.indices.map { parts[...$0].joined(separator: "/") }
            })
        if let exact = folders.first(where: { $0.caseInsensitiveCompare(name) == .orderedSame }) {
            return .found(exact)
        }
        let named = folders.filter {
            ($0.split(separator: "/").last.map(String.init) ?? $0).caseInsensitiveCompare(name) == .orderedSame
        }
        if named.count == 1, let only = named.first { return .found(only) }
        return named.isEmpty ? .none(folders: folders.sorted()) : .ambiguous(named.sorted())
    }

    /// Where the next pull of `feeds` continues, as the store has it now: the one feed's place;
    /// nil for several feeds, or when it cannot be read.
    public func resumption(of feeds: [Feed]) async -> FeedCursor.Next? {
        guard feeds.count == 1, let feed = try? await feed(url: feeds[0].url) else { return nil }
        return feed.cursor.next
    }
}

extension ListedPage {
    /// How many pages of `perPage` the list has (1 when it is empty).
    public func pages(perPage: Int) -> Int { max(1, (total + perPage - 1) / perPage) }
}
