// `feedsync rule` and `feedsync view`: argument declarations over FeedSyncKit's rules and views,
// and nothing else. They live in the front-end module, as `read`'s options do, so the command
// line's own target stays within its 1 300 lines (docs/architecture.md, Modules).

import ArgumentParser
import FeedSyncKit
import Foundation

private let conditionHelp = ArgumentHelp(
    "A condition, quoted as one argument: fields title, content, author, link, feed, categories (~ a pattern, "
        + "= a value), age and date (< or >), unread, starred; and, or, not, ( ). Example: 'title ~ sponsored'.",
    valueName: "when")

package struct RuleCommand: AsyncParsableCommand {
    package init() {}

    package static let configuration = CommandConfiguration(
        commandName: "rule",
        abstract: "Hide, mark read or star what matches a condition, as items arrive: add, list, remove, test.",
        discussion: """
            A rule applies to the items each pull stores, in the same transaction, and to those stored \
            when it is added. Hidden items stay in the store and show with list --hidden. Patterns are \
            RE2's (docs/usage.md, Rules), case-insensitive unless they start with (?-i).
            """,
        subcommands: [AddRule.self, ListRules.self, RemoveRule.self, TestRule.self])
}

package struct AddRule: AsyncParsableCommand {
    package init() {}

    package static let configuration = CommandConfiguration(
        commandName: "add", abstract: "Add a rule and apply it to the items stored; says how many it matched.")

    @OptionGroup var homeOptions: HomeOptions

    @Argument(help: ArgumentHelp("hide, read or star.", valueName: "action"))
    var action: String

    @Argument(help: conditionHelp)
    var when: String

    @OptionGroup var scope: RuleScope

    package func validate() throws {
        guard RuleAction(rawValue: action) != nil else {
            throw ValidationError("the action must be hide, read or star")
        }
    }

    package func run() async throws {
        let library = try await homeOptions.open(.writing)
        let (chosen, folder) = try await scope.resolved(library)
        let (number, matched) = try await fail {
            try await library.addRule(RuleAction(rawValue: action)!, when: when, feed: chosen, folder: folder)
        }
        let done = ["hide": "hid", "read": "marked read", "star": "starred"][action]!
        try Output.line("added rule \(number); it \(done) \(matched) stored item\(matched == 1 ? "" : "s")")
    }
}

/// `--feed F | --folder NAME`: where a rule applies, or what `rule test` looks at.
package struct RuleScope: ParsableArguments {
    package init() {}

    @Option(
        help: ArgumentHelp("Only this feed's items. \(ArgumentHelp.feed.abstract)", valueName: "feed"),
        completion: .feeds)
    var feed: String?

    @Option(help: ArgumentHelp("Only the items of the feeds in this folder (and those inside it).", valueName: "name"))
    var folder: String?

    package func validate() throws {
        guard feed == nil || folder == nil else { throw ValidationError("give --feed or --folder, not both") }
    }

    func resolved(_ library: FeedSync) async throws -> (Feed?, String?) {
        var chosen: Feed?
        if let feed { chosen = try await library.feed(argument: feed) }
        var path: String?
        if let folder { path = try await library.folder(argument: folder) }
        return (chosen, path)
    }
}

package struct ListRules: AsyncParsableCommand {
    package init() {}

    package static let configuration = CommandConfiguration(commandName: "list", abstract: "The rules, by number.")

    @OptionGroup var homeOptions: HomeOptions

    package func run() async throws {
        let library = try await homeOptions.open(.reading)
        let rules = try await fail { try await library.rules() }
        if rules.isEmpty { try Output.line("no rules; add one with: feedsync rule add hide 'title ~ sponsored'") }
        for rule in rules {
            let scope = rule.feedURL.map { "feed \($0)" } ?? rule.folder.map { "folder \($0)" } ?? "all feeds"
            try Output.fitted(Terminal.safe("\(rule.number)  \(rule.action.rawValue)  \(rule.condition)  (\(scope))"))
        }
    }
}

package struct RemoveRule: AsyncParsableCommand {
    package init() {}

    package static let configuration = CommandConfiguration(
        commandName: "remove", abstract: "Remove a rule; what it hid is shown again, unless another hide rule takes it."
    )

    @OptionGroup var homeOptions: HomeOptions

    @Argument(help: ArgumentHelp("The rule's number, as rule list shows it.", valueName: "number"))
    var number: Int64

    package func run() async throws {
        let library = try await homeOptions.open(.writing)
        let shown = try await fail { try await library.removeRule(number: number) }
        try Output.line("removed rule \(number)" + (shown > 0 ? "; \(shown) hidden items are shown again" : ""))
    }
}

package struct TestRule: AsyncParsableCommand {
    package init() {}

    package static let configuration = CommandConfiguration(
        commandName: "test", abstract: "Show what a condition matches among the items shown, changing nothing.")

    @OptionGroup var homeOptions: HomeOptions

    @Argument(help: conditionHelp)
    var when: String

    @OptionGroup var scope: RuleScope

    package func run() async throws {
        let library = try await homeOptions.open(.reading)
        let (chosen, folder) = try await scope.resolved(library)
        let (count, items) = try await fail {
            try await library.matching(when, feed: chosen, folder: folder, limit: 20)
        }
        try Output.line("\(count) stored item\(count == 1 ? "" : "s") match" + (count == 1 ? "es" : ""))
        if !items.isEmpty {
            try Output.line(ItemWords.fields(ListedPage(items: items, total: count)).joined(separator: "\n"))
        }
    }
}

package struct ViewCommand: AsyncParsableCommand {
    package init() {}

    package static let configuration = CommandConfiguration(
        commandName: "view",
        abstract: "Saved views, listed beside the feeds with their unread counts: add, list, remove.",
        discussion: "A view is a named condition (as rule's); list --view NAME shows its items.",
        subcommands: [AddView.self, ListViews.self, RemoveView.self])
}

package struct AddView: AsyncParsableCommand {
    package init() {}

    package static let configuration = CommandConfiguration(commandName: "add", abstract: "Save a view.")

    @OptionGroup var homeOptions: HomeOptions

    @Argument(help: ArgumentHelp("Its name.", valueName: "name"))
    var name: String

    @Argument(help: conditionHelp)
    var when: String

    package func run() async throws {
        let library = try await homeOptions.open(.writing)
        try await fail { try await library.addView(name: name, when: when) }
        try Output.line("added view \(Terminal.safe(name)); feedsync list --view '\(Terminal.safe(name))' shows it")
    }
}

package struct ListViews: AsyncParsableCommand {
    package init() {}

    package static let configuration = CommandConfiguration(
        commandName: "list", abstract: "The views and their unread counts.")

    @OptionGroup var homeOptions: HomeOptions

    package func run() async throws {
        let library = try await homeOptions.open(.reading)
        let views = try await fail { try await library.views(counting: true) }
        if views.isEmpty { try Output.line("no views; add one with: feedsync view add NAME 'author = Jane'") }
        for view in views {
            try Output.fitted(Terminal.safe("\(view.name)  \(view.unread ?? 0) unread  \(view.condition)"))
        }
    }
}

package struct RemoveView: AsyncParsableCommand {
    package init() {}

    package static let configuration = CommandConfiguration(commandName: "remove", abstract: "Remove a view.")

    @OptionGroup var homeOptions: HomeOptions

    @Argument(help: ArgumentHelp("The view's name.", valueName: "name"))
    var name: String

    package func run() async throws {
        let library = try await homeOptions.open(.writing)
        try await fail { try await library.removeView(name: name) }
        try Output.line("removed view \(Terminal.safe(name))")
    }
}
