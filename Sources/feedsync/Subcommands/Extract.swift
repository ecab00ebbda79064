import ArgumentParser
import FeedSyncFrontend
import FeedSyncKit
import Foundation

struct Extract: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "extract",
        abstract: "Find the article in a web page (a file, or a URL fetched once) and print it.",
        discussion: """
            What a reader view shows: the article's text, less the page's menus, share bars, comments \
            and related links, with its title, byline, date and language from the page's metadata. \
            Prints the text for a pager, or with --json: title, byline, published, lang, excerpt, \
            content (the article's HTML, made safe), text and pictures. A page where no article is \
            found exits 65. One that does not read as an article (a front page of links) is printed \
            all the same, with a note on standard error and readerable false in its JSON: a pull \
            keeps the feed's own text for such a page.
            """)

    @Argument(help: ArgumentHelp("The page: a file, - for standard input, or an http(s) URL.", valueName: "page"))
    var page: String

    @Option(help: ArgumentHelp("The page's address, for its relative links (a file's).", valueName: "url"))
    var url: String?

    @Flag(help: "Print JSON instead of text.")
    var json = false

    /// The largest page read.
    static let maxBytes = 8 << 20

    func validate() throws {
        if let url, FeedSync.problem(with: url) != nil {
            throw ValidationError("--url \(String(reflecting: url)) is not an http(s) URL")
        }
    }

    func run() async throws {
        let page = page
        let (read, _) = try await fail { try await interruptible { try await self.read() } }
        guard let (bytes, address) = read else { throw interrupted("nothing was fetched") }
        let article: ExtractedArticle?
        do {
            article = try FeedSync.extractArticle(bytes, url: address, safe: json)
        } catch {
            complain("\(page): \(error.reason)")
            throw ExitCode(Exit.dataError)
        }
        guard let article else {
            complain("\(page) holds no article (too little text outside menus, links and comments)")
            throw ExitCode(Exit.dataError)
        }
        if json {
            let pictures = FeedSync.pictures(in: article.content, base: address)
            try Output.line(
                """
                {"title": \(JSON.string(article.title)), "byline": \(JSON.string(article.byline)), \
                "published": \(JSON.string(article.published)), "lang": \(JSON.string(article.lang)), \
                "excerpt": \(JSON.string(article.excerpt)), "site_name": \(JSON.string(article.siteName)), \
                "readerable": \(article.readerable), "content": \(JSON.string(article.safeContent)), \
                "text": \(JSON.string(article.text)), \
                "pictures": [\(pictures.map(JSON.string).joined(separator: ", "))]}
                """)
            return
        }
        if !article.readerable {
            complain(
                "\(page) does not read as an article (too little text outside menus and links): a pull keeps the feed's own text for it"
            )
        }
        var lines: [String] = []
        if let title = article.title { lines.append(Terminal.safe(title)) }
        let about = [article.byline, article.published].compactMap { $0 }.map(Terminal.safe)
        if !about.isEmpty { lines.append(about.joined(separator: " · ")) }
        let width = max(20, min(Terminal.width, 100))
        for paragraph in article.text.split(separator: "\n\n") {
            lines.append("")
            lines += Terminal.wrap(Terminal.safe(String(paragraph)), width: width)
        }
        try Output.line(lines.joined(separator: "\n"))
    }

    /// The page's bytes and the address its links are relative to.
    func read() async throws -> ([UInt8], String) {
        if page.hasPrefix("http://") || page.hasPrefix("https://") {
            let fetched = try await FeedSync.fetchPage(page, maxBytes: Self.maxBytes)
            return (fetched.bytes, url ?? fetched.url)
        }
        let handle = page == "-" ? FileHandle.standardInput : FileHandle(forReadingAtPath: page)
        guard let handle else {
            complain("cannot read \(page): \(String(cString: strerror(errno)))")
            throw ExitCode(Exit.ioError)
        }
        let data = (try? handle.read(upToCount: Self.maxBytes + 1)) ?? Data()
        guard data.count <= Self.maxBytes else {
            complain("\(page) is longer than \(Self.maxBytes >> 20) MB; no page that long is read")
            throw ExitCode(Exit.dataError)
        }
        return (Array(data), url ?? "http://localhost/")
    }
}
