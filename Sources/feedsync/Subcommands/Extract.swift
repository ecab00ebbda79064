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
            return try Output.line(
                ItemWords.articleJSON(article, pictures: FeedSync.pictures(in: article.content, base: address)))
        }
        if !article.readerable {
            complain(
                "\(page) does not read as an article (too little text outside menus and links): a pull keeps the feed's own text for it"
            )
        }
        try Output.line(ItemWords.articleText(article))
    }

    /// The page's bytes and the address its links are relative to.
    func read() async throws -> ([UInt8], String) {
        if page.hasPrefix("http://") || page.hasPrefix("https://") {
            let fetched = try await FeedSync.fetchPage(page, maxBytes: Self.maxBytes)
            return (fetched.bytes, url ?? fetched.url)
        }
        let data = try Files.read(page, maxBytes: Self.maxBytes, what: "page that long")
        return (Array(data), url ?? "http://localhost/")
    }
}
