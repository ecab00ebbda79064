internal import CXML
import FeedSyncMarkup
import FeedSyncModel
import Foundation

// libxml2's SAX2 events: where an element starts a field of the feed or of an entry (RSS, Atom,
// Media RSS, the schedule's hints, the paging links), its text, where it ends.

extension XMLFeed {
    /// Whether an element inside a field is written as HTML: in XHTML's namespace, or in none and
    /// unprefixed, named in ASCII letters, digits and `-`. Any other (`ev:title`, a Cyrillic name)
    /// gives only its text, never an HTML element of the same local name.
    static func isHTML(_ name: UnsafePointer<UInt8>, _ prefix: UnsafePointer<UInt8>?, _ uri: UnsafePointer<UInt8>?)
        -> Bool
    {
        guard uri.map({ strcmp($0, Namespace.xhtml) == 0 }) ?? (prefix == nil) else { return false }
        var index = 0
        while name[index] != 0 {
            let byte = name[index]
            let letter = (byte | 0x20) >= UInt8(ascii: "a") && (byte | 0x20) <= UInt8(ascii: "z")
            guard letter || index > 0 && (byte == UInt8(ascii: "-") || byte >= 0x30 && byte <= 0x39) else {
                return false
            }
            index += 1
        }
        return index > 0
    }

    func didStart(
        _ localName: UnsafePointer<UInt8>, _ prefix: UnsafePointer<UInt8>?, _ uri: UnsafePointer<UInt8>?,
        _ attributes: Attributes
    ) {
        let name = String(cString: localName)
        // A `media:` prefix with no namespace declared for it is Media RSS: feeds write it often enough.
        let namespace =
            uri.map(namespace(at:)) ?? (prefix.map { strcmp($0, "media") == 0 } == true ? Namespace.media : "")
        let parentBase = bases.last!
        let base = DocumentURL.resolve(attributes["base"], against: parentBase) ?? parentBase
        bases.append(base)
        let depth = bases.count - 1
        func url(_ attribute: StaticString) -> String? { DocumentURL.resolve(attributes[attribute], against: base) }

        guard format != nil else {
            switch (namespace, name) {
            case (_, "rss"):
                format = .rss
                rssNamespace = namespace  // RSS 0.91 to 2.0, some in a default namespace
            case (Namespace.rdf, "RDF"): format = .rss  // RSS 0.90 and 1.0
            case (_, "feed"):
                // Atom 1.0 and 0.3, none, or the namespaces of its drafts (echo, pie, necho).
                format = .atom
                atomNamespace = namespace
            case (_, "html"), (_, "HTML"):
                error = FeedError(
                    "the document is a web page, not a feed; use the address of the site's RSS or Atom feed")
                stop()
            default:
                error = FeedError("the XML is neither RSS nor Atom (its root element is <\(name)>)")
                stop()
            }
            return
        }
        // Atom 1.0 and 0.3 are read alike, and an Atom root without a namespace makes its
        // unqualified children Atom; RSS's are unqualified, or in RSS 0.90's, 1.0's or the root's.
        let atom =
            namespace == Namespace.atom || namespace == Namespace.atom03 || format == .atom && namespace.isEmpty
            || namespace == atomNamespace
        let plain =
            !atom
            && (namespace.isEmpty || namespace == Namespace.rss1 || namespace == Namespace.rss090
                || namespace == rssNamespace)

        if let open = capture {
            if open.writesElements, Self.isHTML(localName, prefix, uri) {
                capture!.appendStart(name, attributes, base: base == open.base ? nil : base)
            }
            // An item's `<image>` written like a channel's: its URL is the `<url>` child's text alone.
            if open.field == .image, !open.ofFeed, depth == open.depth + 1, plain, name == "url" {
                capture = Capture(field: .image, depth: depth, base: base)
            }
            return
        }
        // An Atom feed's <item> is read as an entry, as feedparser does.
        let startsEntry = (plain || atom) && name == "item" || atom && name == "entry"
        // Entries never nest: one that starts inside another means the other was not closed (a
        // document libxml2 is recovering from). The open one ends here.
        if startsEntry, let open = entry {
            entry = nil
            finish(open)
        }
        // The root is at depth 1: Atom's feed-level elements are at 2, RSS's channel's at 3.
        if depth == 2 { topElement = name }
        guard entry != nil else {
            let ofFeed = atom ? depth == 2 : plain && depth == 3 && topElement == "channel"
            if startsEntry {
                entriesSeen += 1
                sourceDepth = nil
                authorDepth = nil
                entry = Entry()
                entry?.about = attributes["about"].flatMap { DocumentURL.resolve($0, against: base) }
                entryDepth = depth
            } else if name == "item" || name == "entry" {
                unrecognized += 1
            } else if atom, name == "link" {
                switch attributes["rel"]?.lowercased() {
                case "next": next = next ?? url("href")
                case "prev-archive": previousArchive = previousArchive ?? url("href")
                case "alternate", nil: if ofFeed, siteURL == nil { siteURL = url("href") }
                default: break
                }
            } else if let field = scheduleField(name, namespace, depth: depth, ofFeed: ofFeed && plain) {
                capture = Capture(field: field, depth: depth, base: base, ofFeed: true)
            } else if ofFeed, atom, name == "author", feedAuthor == nil {
                authorDepth = depth
            } else if atom, name == "name", depth == (authorDepth ?? -1) + 1 {
                capture = Capture(field: .author, depth: depth, base: base, ofFeed: true)
            } else if ofFeed, plain, name == "skipHours" || name == "skipDays" {
                skipList = (name == "skipHours" ? .skipHour : .skipDay, depth)
            } else if ofFeed, name == "title" && feedTitle == nil || !atom && name == "link" && siteURL == nil {
                let (type, mode) = (attributes["type"]?.lowercased(), attributes["mode"]?.lowercased())
                capture = Capture(
                    field: name == "title" ? .title : .link, depth: depth, type: type, mode: mode, base: base,
                    ofFeed: true, markup: name == "title" && Capture.isMarkup(type: type, mode: mode))
            }
            return
        }

        // Only the entry's own children are its fields: what Atom's `source` holds (another feed's
        // title and links) gives it nothing, and deeper elements (a `<link>` in a `<category>`'s
        // `<image>`) nothing but Media RSS pictures (`media:content` in a `media:group`).
        if sourceDepth != nil { return }
        if atom, name == "source", depth == entryDepth + 1 {
            sourceDepth = depth
            return
        }
        // An Atom author's name is the author's (its email and uri are not).
        if atom, name == "name", depth == (authorDepth ?? -1) + 1 {
            if entry?[.author] == nil { capture = Capture(field: .author, depth: depth, base: base) }
            return
        }
        if depth > entryDepth + 1, namespace != Namespace.media { return }

        // Taken out while changed, so it is changed in place, not copied.
        var current = entry!
        entry = nil
        defer { entry = current }
        let type = attributes["type"]?.lowercased()
        func begin(_ field: Field, xhtml: Bool = false) {
            // The first of each field, but the last `updated`, as feedparser reads a date given twice.
            guard current[field] == nil || field == .updated else { return }
            let mode = attributes["mode"]?.lowercased()
            capture = Capture(
                field: field, depth: depth, type: type, mode: mode, base: base,
                markup: xhtml || field.isText && Capture.isMarkup(type: type, mode: mode))
        }
        let isImageType = type?.hasPrefix("image/") == true
        func enclose(_ file: String?, length: String?, duration: String? = nil) {
            if let found = FeedEnclosure.checked(url: file, type: type, length: length, duration: duration) {
                current.enclosures.append(found)
            }
        }
        switch (atom ? Namespace.atom : plain ? "" : namespace, name) {
        case ("", "title"), (Namespace.atom, "title"): begin(.title)
        case (Namespace.dc, "title"): begin(.dcTitle)
        case (Namespace.media, "title"): begin(.mediaTitle)
        case ("", "link"):
            // An RSS item's link written as Atom writes it, in an `href`.
            if let href = url("href"), current.alternate == nil,
                attributes["rel"].map({ $0.lowercased() == "alternate" }) ?? true
            {
                current.alternate = href
            } else {
                begin(.link)
            }
        case ("", "id"): begin(.id)  // an RSS item with an Atom-style id
        case ("", "guid"):
            current.guidIsPermaLink = attributes["isPermaLink"]?.lowercased() != "false"
            begin(.guid)
        case ("", "description"): begin(.description)
        case ("", "image"):
            // An item's own picture, as some feeds write it: its URL as the text, or an attribute.
            if let attribute = url("url") ?? url("href") {
                current.image = current.image ?? attribute
            } else {
                begin(.image)
            }
        case ("", "pubDate"): begin(.pubDate)
        case ("", "enclosure"):
            if current.mediaFile == nil, let file = url("url") {
                current.mediaFile = file
                current.mediaIsAudioOrVideo = Self.isAudioOrVideo(type: type, url: file)
            }
            if isImageType || type == nil && Self.looksLikeImage(attributes["url"]) {
                current.enclosure = current.enclosure ?? url("url")
            } else {
                enclose(url("url"), length: attributes["length"])
            }
        case (Namespace.atom, "id"): begin(.id)
        case (Namespace.atom, "summary"): begin(.summary)
        case (Namespace.atom, "content"): if attributes["src"] == nil { begin(.content) }
        case (Namespace.atom, "published"): begin(.published)
        case (Namespace.atom, "updated"): begin(.updated)
        case (Namespace.atom, "issued"): begin(.issued)  // Atom 0.3's dates
        case (Namespace.atom, "modified"): begin(.modified)
        case (Namespace.atom, "created"): begin(.created)
        case (Namespace.atom, "link"):
            let rel = attributes["rel"]?.lowercased() ?? "alternate"
            if rel == "alternate", attributes["href"] == nil {
                begin(.link)  // Atom 0.3 as some wrote it: the URL as the element's text
            } else if rel == "alternate", current.alternate == nil, type == nil || type!.contains("html") {
                current.alternate = url("href")
            } else if rel == "enclosure" {
                if current.mediaFile == nil, let file = url("href") {
                    current.mediaFile = file
                    current.mediaIsAudioOrVideo = Self.isAudioOrVideo(type: type, url: file)
                }
                if isImageType {
                    current.enclosure = current.enclosure ?? url("href")
                } else {
                    enclose(url("href"), length: attributes["length"])
                }
            }
        case (Namespace.content, "encoded"): begin(.encoded)
        // An item's whole post as XHTML, in its namespace or (as feedparser also reads it) in none.
        case (Namespace.xhtml, "body"), ("", "body"): begin(.encoded, xhtml: true)
        case (Namespace.dc, "date"): begin(.dcDate)
        case (Namespace.media, "content"):
            // medium="image" whatever the URL ends in; untyped, an image by its extension.
            current.media = current.media ?? url("url")
            let medium = attributes["medium"]?.lowercased()
            if medium == "image" || isImageType
                || medium == nil && type == nil && Self.looksLikeImage(attributes["url"])
            {
                current.mediaContent = current.mediaContent ?? url("url")
            } else if let file = url("url"),
                medium == "audio" || medium == "video" || Self.isAudioOrVideo(type: type, url: file)
            {
                enclose(file, length: attributes["fileSize"], duration: attributes["duration"])
            }
        case (Namespace.media, "thumbnail"): current.mediaThumbnail = current.mediaThumbnail ?? url("url")
        case (Namespace.itunes, "image"): current.itunesImage = current.itunesImage ?? url("href")
        case (Namespace.itunes, "duration"): begin(.itunesDuration)
        case ("", "author"): begin(.author)
        case (Namespace.atom, "author"): authorDepth = depth
        case (Namespace.dc, "creator"): begin(.dcCreator)
        case ("", "category"): capture = Capture(field: .category, depth: depth, base: base)
        case (Namespace.atom, "category"):
            if let label = (attributes["label"] ?? attributes["term"])?.trimmed.nilIfEmpty {
                current.categories.append(label)
            }
        default: break
        }
    }

    /// The schedule element (of the feed, not an entry) that starts here, if one does: RSS's
    /// `ttl`, an `hour` or `day` of its skip lists, or an `sy:` element of the channel or feed.
    func scheduleField(_ name: String, _ namespace: String, depth: Int, ofFeed: Bool) -> Field? {
        if ofFeed, name == "ttl", schedule.ttlMinutes == nil { return .ttl }
        if let list = skipList, depth == list.depth + 1, namespace.isEmpty || namespace == rssNamespace,
            name == (list.field == .skipHour ? "hour" : "day")
        {
            return list.field
        }
        let feedLevel = format == .atom ? depth == 2 : depth == 3 && topElement == "channel"
        guard feedLevel, namespace == Namespace.sy else { return nil }
        switch name {
        case "updatePeriod" where updatePeriod == nil: return .updatePeriod
        case "updateFrequency" where updateFrequency == nil: return .updateFrequency
        default: return nil
        }
    }

    func namespace(at uri: UnsafePointer<UInt8>) -> String {
        if let known = namespaces[uri] { return known }
        let name = String(cString: uri)
        namespaces[uri] = name
        return name
    }

    func found(_ bytes: UnsafePointer<UInt8>?, _ count: Int) {
        expanded += count
        if expanded - pushed > FeedLimits.expansionBytes, error == nil {
            error = FeedError(
                "its entities expand to more than \(FeedLimits.expansionBytes >> 20) MB of text "
                    + "beyond the document's own length"
            )
            stop()
            return
        }
        guard capture != nil, let bytes else { return }
        capture!.append(UnsafeBufferPointer(start: bytes, count: count))
    }

    func didEnd(
        _ localName: UnsafePointer<UInt8>?, _ prefix: UnsafePointer<UInt8>?, _ uri: UnsafePointer<UInt8>?
    ) {
        let depth = bases.count - 1
        bases.removeLast()
        if let done = capture, done.depth == depth {
            capture = nil
            var text = HTMLEntities.replacingC1(done.text)
            // Text encoded twice is repaired before anything (a summary, a title) is made of it.
            if done.field.isText { text = Mojibake.repaired(text) }
            let captured = Captured(
                text: text, type: done.markup ? "html" : done.type, mode: done.markup ? nil : done.mode,
                base: done.base)
            if done.ofFeed {
                foundOfFeed(done.field, captured)
            } else if done.field == .category {
                if let category = captured.plain().nilIfEmpty { entry?.categories.append(category) }
            } else {
                entry?[done.field] = captured
            }
        } else if capture?.writesElements == true, let localName, Self.isHTML(localName, prefix, uri) {
            capture!.appendEnd(String(cString: localName))
        } else if capture == nil, depth == skipList?.depth {
            skipList = nil
        } else if capture == nil, depth == sourceDepth {
            sourceDepth = nil
        } else if capture == nil, depth == authorDepth {
            authorDepth = nil
        } else if capture == nil, depth == entryDepth, let finished = entry {
            entry = nil
            finish(finished)
        }
    }

    /// Makes an item of a read entry, or counts it skipped.
    func finish(_ entry: Entry) {
        let read = item(from: entry)
        if let item = read.flatMap(FeedLimits.bounded) {
            made += 1
            items.append(item)
            linkKeyed.append(item.key == item.link && entry[.id] == nil && entry[.guid] == nil && entry.about == nil)
            mediaFiles.append(entry.mediaFile.map { ($0, entry.mediaIsAudioOrVideo) })
            if items.count >= batch { flush() }
        } else {
            skipped += 1  // nothing to show (no id, link, title, text or picture), or over a limit
            if read != nil { unusable += 1 }
        }
    }

    /// The first fatal error makes the document unusable; warnings and namespace errors (an
    /// undeclared prefix) do not.
    /// The first fatal error is remembered: libxml2 recovers and reads on, and the document is
    /// refused only if nothing could be read at all. Warnings and namespace errors (an undeclared
    /// prefix) are not errors.
    func failed(_ report: xmlErrorPtr?) {
        guard malformed == nil, let report = report?.pointee, report.level == XML_ERR_FATAL else { return }
        let reason = report.message.map { String(cString: $0).trimmingCharacters(in: .whitespacesAndNewlines) }
        // libxml2's words, bounded: a message quotes bytes of the document.
        malformed = "line \(report.line), column \(report.int2)\(reason.map { " (\(String($0.prefix(120))))" } ?? "")"
    }

    /// Hands the items read so far to `onItems`, when streaming.
    func flush() {
        distinguishSharedLinks()
        guard let onItems, !items.isEmpty, error == nil, callbackError == nil else { return }
        do {
            try onItems(items)
        } catch {
            callbackError = error
            stop()
        }
        items.removeAll(keepingCapacity: true)
    }

    /// Items keyed by their link (they have no id) may be different items sharing it (a podcast's
    /// episodes on one page). One with a sound or video enclosure is keyed by link and
    /// enclosure, always, so its key never depends on its neighbours; one whose link another item
    /// read with it shares, by link and title (over the whole document when it is read in memory,
    /// over each part when it is read in parts), so two sharing both are one story, stored once;
    /// any other by its link alone: a story's picture (which a CDN renames) is no part of who it
    /// is. Such an item with a picture enclosure was keyed by link and picture before: that key is
    /// its `formerKey`, by which the store finds it.
    func distinguishSharedLinks() {
        guard linkKeyed.count == items.count else { return }
        defer {
            linkKeyed.removeAll(keepingCapacity: true)
            mediaFiles.removeAll(keepingCapacity: true)
        }
        guard linkKeyed.contains(true) else { return }
        // Items sharing each link (those with sound or video aside); and, for the former rule,
        // those with no enclosure at all.
        var shared: [String: Int] = [:]
        var formerlyShared: [String: Int] = [:]
        for (index, item) in items.enumerated() where linkKeyed[index] {
            if mediaFiles[index]?.audioOrVideo != true { shared[item.key, default: 0] += 1 }
            if mediaFiles[index] == nil { formerlyShared[item.key, default: 0] += 1 }
        }
        func keyed(_ link: String, _ suffix: String) -> String {
            let key = link + "#" + suffix
            // Within the key's limit: a long suffix is replaced by its hash.
            return key.utf8.count <= FeedLimits.keyBytes
                ? key : link + "#" + (ItemKey.hash(title: suffix, pictureURL: nil) ?? "")
        }
        for index in items.indices where linkKeyed[index] {
            let link = items[index].key
            let media = mediaFiles[index]
            if let media, media.audioOrVideo {
                items[index].key = keyed(link, media.file)
            } else if shared[link, default: 0] > 1 {
                items[index].key = keyed(link, items[index].title)  // the same title too: the same story
            }
            let former =
                media.map { keyed(link, $0.file) }
                ?? (formerlyShared[link, default: 0] > 1 ? keyed(link, items[index].title) : link)
            if former != items[index].key { items[index].formerKey = former }
        }
    }

    /// The feed's title (plain text, cut like an item's) or its site's link.
    func foundOfFeed(_ field: Field, _ captured: Captured) {
        let text = String(decoding: captured.text, as: UTF8.self)
        switch field {
        case .title: feedTitle = FeedLimits.boundedTitle(captured.plain()).nilIfEmpty
        case .author: feedAuthor = feedAuthor ?? captured.plain().nilIfEmpty
        case .ttl: schedule.ttlMinutes = FeedSchedule.minutes(text)
        case .skipHour: if let hour = FeedSchedule.hour(text) { schedule.skipHours |= 1 << hour }
        case .skipDay: if let day = FeedSchedule.day(text) { schedule.skipDays |= 1 << day }
        case .updatePeriod: updatePeriod = FeedSchedule.period(text)
        case .updateFrequency: updateFrequency = FeedSchedule.minutes(text).flatMap { $0 > 0 ? $0 : nil }
        default: siteURL = DocumentURL.resolve(text, against: captured.base)
        }
    }
}
