import ArgumentParser
import FeedSyncFrontend
import FeedSyncKit
import Foundation

struct AccountCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "account",
        abstract: "Sync with an account on Tiny Tiny RSS or a Google Reader API server: add, list, remove.",
        discussion: """
            Every pull syncs each account beside the local feeds: its articles come down as items of \
            its feeds (folders from its categories), marks made here go back, marks made elsewhere \
            come down. The password is read from FEEDSYNC_PASSWORD, from --password-file, or asked \
            for on a terminal; it is kept in the data home (accounts/, mode 0600), never printed.
            """,
        subcommands: [AddAccount.self, ListAccounts.self, RemoveAccount.self])
}

struct AddAccount: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add", abstract: "Log in to a server and keep the account; the next pull syncs it.")

    @OptionGroup var homeOptions: HomeOptions

    @Argument(help: ArgumentHelp("ttrss (Tiny Tiny RSS) or greader (the Google Reader API).", valueName: "kind"))
    var kind: String

    @Argument(help: ArgumentHelp("The server's address (FreshRSS: https://host/api/greader.php).", valueName: "url"))
    var url: String

    @Option(help: ArgumentHelp("The user name on the server.", valueName: "name"))
    var user: String

    @Option(help: ArgumentHelp("Read the password from this file (its first line).", valueName: "file"))
    var passwordFile: String?

    @Option(help: ArgumentHelp("What to call the account here (default: user@host).", valueName: "name"))
    var name: String?

    @Option(help: ArgumentHelp("Inoreader's application id (its key: FEEDSYNC_APP_KEY).", valueName: "id"))
    var appID: String?

    func validate() throws {
        guard FeedSync.accountKinds.contains(kind) else {
            throw ValidationError("the kind of server must be one of: \(FeedSync.accountKinds.joined(separator: ", "))")
        }
        if case .failure(let error) = FeedSync.apiURL(url, kind: kind) { throw ValidationError(error.message) }
        guard (1...256).contains(user.count), !user.unicodeScalars.contains(where: SafeText.isUnsafe) else {
            throw ValidationError("the user name must be one line of at most 256 characters")
        }
        if case .failure(let error) = FeedSync.application(appID, kind: kind) { throw ValidationError(error.message) }
    }

    func run() async throws {
        let password = try Asking.password(file: passwordFile)
        let api = try FeedSync.apiURL(url, kind: kind).get()
        // Logged in before the data home is opened: a refused password leaves nothing behind.
        let app = try FeedSync.application(appID, kind: kind).get()
        let secrets = try await fail {
            try await FeedSync.logIn(kind: kind, url: api, user: user, password: password, app: app)
        }
        let library = try await homeOptions.open(.writing)
        let account = try await fail {
            try await library.addAccount(
                kind: kind, url: api, user: user, name: name ?? FeedSync.accountName(user: user, url: api),
                secrets: secrets)
        }
        try Output.line("added account \(Terminal.safe(account.name)); feedsync pull syncs it")
    }

}

struct ListAccounts: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "The accounts and their last sync.")

    @OptionGroup var homeOptions: HomeOptions

    func run() async throws {
        let library = try await homeOptions.open(.reading)
        let accounts = try await fail { try await library.accounts() }
        if accounts.isEmpty {
            try Output.line("no accounts; add one with: feedsync account add ttrss|greader URL --user NAME")
        }
        for account in accounts {
            let last =
                account.lastSyncAt.map { at in
                    "last sync \(LocalTime.short(at)): \(account.lastOutcome?.rawValue ?? "?")"
                        + (account.lastError.map { " (\($0))" } ?? "")
                } ?? "not synced yet"
            try Output.fitted(
                Terminal.safe("\(account.name)  \(account.kind)  \(account.user) at \(account.url)  \(last)"))
        }
    }
}

struct RemoveAccount: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "remove",
        abstract: "Forget an account: its feeds, items, the pictures only they use, and its password go here; "
            + "nothing changes on the server.")

    @OptionGroup var homeOptions: HomeOptions

    @Argument(help: ArgumentHelp("The account's name, as account list shows it.", valueName: "name"))
    var name: String

    func run() async throws {
        let library = try await homeOptions.open(.writing)
        let account = try await fail { try await library.account(named: name) }
        try await fail { try await library.removeAccount(account) }
        try Output.line("removed account \(Terminal.safe(account.name))")
    }
}
