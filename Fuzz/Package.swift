// swift-tools-version:6.1
// libFuzzer targets for feedsync's decoders. Not part of the build or of CI: see docs/fuzzing.md.
import PackageDescription

let flags: [SwiftSetting] = [.unsafeFlags(["-parse-as-library", "-Xcc", "-I/usr/include/libxml2"])]

func target(_ name: String) -> Target {
    .executableTarget(
        name: name, dependencies: [.product(name: "FeedSyncFeed", package: "main"), "FuzzSupport"], swiftSettings: flags,
        linkerSettings: [.linkedLibrary("xml2")])
}

let package = Package(
    name: "feedsync-fuzz",
    dependencies: [.package(path: "..")],
    targets: ["FuzzXML", "FuzzJSONFeed", "FuzzPagedJSON", "FuzzDates", "FuzzHTMLText"].map(target)
        + [
            .target(name: "FuzzDriver"),
            .target(
                name: "FuzzSupport", dependencies: [.product(name: "FeedSyncFeed", package: "main"), "FuzzDriver"],
                swiftSettings: [.unsafeFlags(["-Xcc", "-I/usr/include/libxml2"])]),
        ],
    swiftLanguageModes: [.v6]
)
