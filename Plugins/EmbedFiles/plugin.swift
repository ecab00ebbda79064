import Foundation
import PackagePlugin

/// Embeds files of the package into a target as a generated Swift source, so the installed
/// binary needs no source tree at run time: `Migrations/*.sql` into FeedSyncStore
/// (`embeddedMigrations`), the reading page's `Page/*` into FeedSyncServe (`embeddedPage`).
@main
struct EmbedFiles: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let (folder, variable, options): (String, String, [String]) =
            switch target.name {
            case "FeedSyncStore": ("Migrations", "embeddedMigrations", ["--strip-extension"])
            case "FeedSyncServe": ("Page", "embeddedPage", [])
            default: throw PluginError("EmbedFiles knows nothing to embed into \(target.name)")
            }
        let files = try FileManager.default
            .contentsOfDirectory(
                at: context.package.directoryURL.appending(path: folder), includingPropertiesForKeys: nil
            )
            .filter { !$0.lastPathComponent.hasPrefix(".") }
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
        let output = context.pluginWorkDirectoryURL.appending(path: "Embedded\(folder).swift")
        return [
            .buildCommand(
                displayName: "Embedding \(files.count) files of \(folder)",
                executable: try context.tool(named: "EmbedFilesTool").url,
                arguments: [output.path, variable] + options + files.map(\.path),
                inputFiles: files,
                outputFiles: [output])
        ]
    }
}

struct PluginError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
