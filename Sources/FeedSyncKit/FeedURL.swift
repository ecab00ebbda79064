import FeedSyncModel

/// Feed URLs in one spelling, so one feed is never subscribed twice: the scheme and host in lower
/// case, the scheme's default port dropped, an empty path made `/`. The rest (path, query) is
/// kept as given: servers may tell its letter cases apart.
public enum FeedURL {
    public static func normalised(_ url: String) -> String {
        guard let separator = url.range(of: "://") else { return url }
        let scheme = url[..<separator.lowerBound].lowercased()
        let rest = url[separator.upperBound...]
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex
        var authority = String(rest[..<authorityEnd])
        var path = String(rest[authorityEnd...])
        // The host is what follows any user information; an IPv6 literal keeps its brackets.
        let userEnd = authority.lastIndex(of: "@").map { authority.index(after: $0) } ?? authority.startIndex
        var host = String(authority[userEnd...]).lowercased()
        let defaultPort = scheme == "http" ? ":80" : scheme == "https" ? ":443" : nil
        if let defaultPort, host.hasSuffix(defaultPort) { host.removeLast(defaultPort.count) }
        authority = authority[..<userEnd] + host
        if path.isEmpty || path.first == "?" || path.first == "#" { path = "/" + path }
        return scheme + "://" + authority + path
    }
}
