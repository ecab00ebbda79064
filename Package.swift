// swift-tools-version:6.1
import PackageDescription

// CXML's headers, from Debian's libxml2-dev, for each target that loads the module: FeedSyncFeed
// imports it, and without library evolution every module importing FeedSyncFeed loads it too.
// (pkg-config would give the same path, but also its `-lxml2`: see CXML below.)
let libxml2Headers: [SwiftSetting] = [.unsafeFlags(["-Xcc", "-I/usr/include/libxml2"])]

// The executables' links. The toolchain's lld packs the release binary's 84 000 relative
// relocations (DT_RELR, glibc 2.36+; gold, the default linker, cannot): ld.so then reads 15 KB
// instead of 2 MB at every start, and the binary stays position-independent (BENCHMARKS.md, P5).
// The driver exports every symbol (28 000), for a crash backtracer a statically linked feedsync
// never finds (swift-backtrace is not installed beside it); the runtime still looks its own path
// up at start with dladdr, which walks them all: 0.5-1 ms of every command (BENCHMARKS.md, P5).
// SwiftPM applies these to the test binaries' links too.
let executableLinking: [LinkerSetting] = [
    .unsafeFlags([
        "-use-ld=lld", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs", "-Xlinker", "--no-export-dynamic",
    ])
]

let package = Package(
    name: "feedsync",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "feedsync", targets: ["feedsync"]),
        .executable(name: "feedsync-serve", targets: ["feedsync-serve"]),
        .executable(name: "feedsync-read", targets: ["feedsync-read"]),
        .executable(name: "feedsync-demo-server", targets: ["feedsync-demo-server"]),
        // The decoders, for the fuzz targets in Fuzz/ (a package of their own: see docs/fuzzing.md).
        .library(name: "FeedSyncFeed", targets: ["FeedSyncModel", "FeedSyncMarkup", "FeedSyncFeed"]),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", exact: "1.8.2"),
        .package(url: "https://github.com/swhitty/FlyingFox", exact: "0.27.1"),
        // The reading page's server (`feedsync serve`), on SwiftNIO; without the traits that pull
        // in swift-configuration.
        .package(url: "https://github.com/hummingbird-project/hummingbird", exact: "2.28.1", traits: []),
        // Hummingbird's own dependencies, named for the header and logger types the server uses.
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    ],
    targets: [
        // libcurl (headers from Debian's libcurl4-openssl-dev), loaded on first use, with typed
        // shims over its variadic calls.
        .target(name: "CCurl", linkerSettings: [.linkedLibrary("dl")]),
        // C calls Swift cannot make: glibc's O_TMPFILE and linkat, SQLite's variadic
        // sqlite3_config, xxHash (libxxhash0 by its soname: Debian ships its header only in -dev).
        .target(
            name: "CFeedSyncSystem", linkerSettings: [.linkedLibrary("sqlite3"), .linkedLibrary(":libxxhash.so.0")]),
        // libxml2's SAX2 parser, for RSS and Atom: headers only (libxml2Headers, not pkg-config,
        // whose `-lxml2` would load libxml2 and ICU at every start); the library is loaded on
        // first use (FeedSyncFeed/LibXML2.swift).
        .systemLibrary(name: "CXML", providers: [.apt(["libxml2-dev"])]),
        // Debian's picture libraries (headers from libturbojpeg0-dev, libpng-dev, libwebp-dev,
        // libgif-dev, libsixel-dev), each loaded on first use: decoding what a terminal shows, and
        // the PNG and sixel it is sent as.
        .target(name: "CPictures", linkerSettings: [.linkedLibrary("dl")]),
        // RE2 (Debian's libre2-dev), C++, behind a C interface: the rules' and views' patterns,
        // matched in time linear in the text. Linked, not loaded on first use as libcurl is: its
        // C++ API has no stable names to look up, and loading it costs a start 0.1 ms.
        .target(name: "CRegex", linkerSettings: [.linkedLibrary("re2")]),

        // Turns Migrations/*.sql and Page/* into Swift sources at build time, so the binary carries
        // its schema and its reading page.
        .executableTarget(name: "EmbedFilesTool"),
        .plugin(
            name: "EmbedFiles",
            capability: .buildTool(),
            dependencies: ["EmbedFilesTool"]),

        // The values every layer passes (feeds, items, pictures, reports, errors, the data home):
        // depends on nothing; every module of ours imports it, and Kit re-exports it.
        .target(name: "FeedSyncModel"),

        // Lowest modules: Transport and Feed import only the model; Store imports Feed for the
        // items it stores.
        .target(
            name: "FeedSyncStore",
            dependencies: [
                "FeedSyncModel", "FeedSyncMarkup", "FeedSyncFeed",
                .product(name: "GRDB", package: "GRDB.swift"),
                // SQLite's C API, for the two statements that need it (Store+SQLite.swift).
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                "CFeedSyncSystem", "CRegex",
            ],
            swiftSettings: libxml2Headers,
            plugins: ["EmbedFiles"]),
        .target(name: "FeedSyncTransport", dependencies: ["FeedSyncModel", "CCurl", "CFeedSyncSystem"]),
        // Below the feeds and the web page's HTML alike: the libxml2 shim and the text tools both
        // read with (entities, plain text, dates, JSON, URLs, search text, content pictures).
        .target(name: "FeedSyncMarkup", dependencies: ["FeedSyncModel", "CXML"], swiftSettings: libxml2Headers),
        // The feed formats: what a document of each says.
        .target(
            name: "FeedSyncFeed", dependencies: ["FeedSyncModel", "FeedSyncMarkup", "CXML"],
            swiftSettings: libxml2Headers),
        // A web page's HTML: its article (the extractor and its tree), safe HTML, readable text,
        // the feeds it names.
        .target(
            name: "FeedSyncPage", dependencies: ["FeedSyncModel", "FeedSyncMarkup", "CXML"],
            swiftSettings: libxml2Headers),

        // Sync drives Transport, Feed and Store.
        .target(
            name: "FeedSyncPull",
            dependencies: [
                "FeedSyncModel", "FeedSyncStore", "FeedSyncTransport", "FeedSyncMarkup", "FeedSyncFeed", "FeedSyncPage",
            ],
            swiftSettings: libxml2Headers),

        // Images uses Transport and Store.
        .target(
            name: "FeedSyncImages",
            dependencies: ["FeedSyncModel", "FeedSyncStore", "FeedSyncTransport", "CFeedSyncSystem", "CPictures"]),

        // The use cases behind one type, `FeedSync`: what the command line and the reading page call.
        .target(
            name: "FeedSyncKit",
            dependencies: [
                "FeedSyncModel", "FeedSyncPull", "FeedSyncImages", "FeedSyncStore", "FeedSyncTransport",
                "FeedSyncMarkup",
                "FeedSyncFeed", "FeedSyncPage",
            ],
            swiftSettings: libxml2Headers),

        // The reading page: an HTTP server on the loopback over FeedSyncKit, its page embedded.
        .target(
            name: "FeedSyncServe",
            dependencies: [
                "FeedSyncKit", "FeedSyncPage", .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: libxml2Headers,
            plugins: ["EmbedFiles"]),

        // What both executables share: the data home option, messages and exit codes, output,
        // terminal text, interruption, and `serve`'s options.
        .target(
            name: "FeedSyncFrontend",
            dependencies: ["FeedSyncKit", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            swiftSettings: libxml2Headers),

        // `feedsync read`: the endless list in the terminal, over FeedSyncKit; pictures drawn by
        // Debian's libraries (CPictures), the terminal given back by CFeedSyncSystem's handlers.
        .target(
            name: "FeedSyncReader",
            dependencies: ["FeedSyncKit", "FeedSyncFrontend", "CPictures", "CFeedSyncSystem"],
            swiftSettings: libxml2Headers),

        // Thin executable: parse arguments, call FeedSyncKit, format output, map errors to exit codes.
        // `feedsync serve` and `feedsync read` hand their arguments to feedsync-serve and
        // feedsync-read, installed beside it, so that no other command loads the web server's
        // modules (BENCHMARKS.md, P5) or the terminal reader's.
        .executableTarget(
            name: "feedsync",
            dependencies: [
                "FeedSyncKit", "FeedSyncFrontend",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: libxml2Headers,
            linkerSettings: executableLinking),

        // The reading page's process: `feedsync serve` becomes it.
        .executableTarget(
            name: "feedsync-serve",
            dependencies: [
                "FeedSyncKit", "FeedSyncFrontend", "FeedSyncServe",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: libxml2Headers,
            linkerSettings: executableLinking),

        // The terminal reader's process: `feedsync read` becomes it.
        .executableTarget(
            name: "feedsync-read",
            dependencies: [
                "FeedSyncKit", "FeedSyncFrontend", "FeedSyncReader",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: libxml2Headers,
            linkerSettings: executableLinking),

        // Loopback feed server shared by tests, benchmarks and the README's demo.
        .target(
            name: "FeedSyncDemoServer",
            dependencies: [.product(name: "FlyingFox", package: "FlyingFox")]),
        .executableTarget(
            name: "feedsync-demo-server",
            dependencies: [
                "FeedSyncDemoServer",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]),

        .testTarget(
            name: "FeedSyncTests",
            dependencies: [
                "FeedSyncModel", "FeedSyncMarkup", "FeedSyncPage", "FeedSyncKit", "FeedSyncReader",
                "FeedSyncDemoServer",
                "feedsync",
                "feedsync-serve",
                "feedsync-read",
            ],
            resources: [.copy("Fixtures")],
            swiftSettings: libxml2Headers),
    ],
    swiftLanguageModes: [.v6]
)
