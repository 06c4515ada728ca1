// swift-tools-version: 6.1
import PackageDescription

// Evidence for flatmap-future's declared known issue (docs/PEERS.md, "Under ThreadSanitizer"): OpenCombine
// 0.14.0's FlatMap alone, with an upstream that takes no lock, crashes when upstream completes on
// one thread while the last Future is fulfilled on another. Not part of the suite: it crashes by design.
//   swift run -c release --package-path Benchmarks/Peers/Evidence/FlatMapCompletionRace flatmap-completion-race 300000
let package = Package(
    name: "FlatMapCompletionRace",
    platforms: [.macOS(.v15)],
    dependencies: [.package(url: "https://github.com/OpenCombine/OpenCombine", exact: "0.14.0")],
    targets: [
        .executableTarget(
            name: "flatmap-completion-race",
            dependencies: [.product(name: "OpenCombine", package: "OpenCombine")],
            swiftSettings: [.swiftLanguageMode(.v5)])
    ]
)
