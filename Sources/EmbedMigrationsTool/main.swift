import Foundation

// Usage: EmbedMigrationsTool OUTPUT.swift 0001_init.sql 0002_more.sql ...
// Writes `embeddedMigrations`, the migrations in file-name order, as Swift string literals.
let arguments = CommandLine.arguments.dropFirst()
guard let output = arguments.first else {
    FileHandle.standardError.write(Data("usage: EmbedMigrationsTool OUTPUT FILE.sql...\n".utf8))
    exit(64)
}

var source = """
    // Generated from Migrations/*.sql by the EmbedMigrations plugin. Do not edit.

    let embeddedMigrations: [(name: String, sql: String)] = [

    """
for path in arguments.dropFirst().sorted(by: { ($0 as NSString).lastPathComponent < ($1 as NSString).lastPathComponent }
) {
    let name = ((path as NSString).lastPathComponent as NSString).deletingPathExtension
    let sql = try String(contentsOfFile: path, encoding: .utf8)
    // A raw string with enough #s that the SQL can never close it early.
    var hashes = "#"
    while sql.contains("\"" + hashes) { hashes += "#" }
    source += "    (\(String(reflecting: name)), \(hashes)\"\"\"\n\(sql)\n\"\"\"\(hashes)),\n"
}
source += "]\n"
try source.write(toFile: output, atomically: true, encoding: .utf8)
