// swift-tools-version: 6.1
import PackageDescription

// The bench: the scenarios, the runner, the `stepbench` tool, the package-benchmark suite and its
// thresholds, and the peers (Benchmarks/Peers/, a package of its own, brought in as any outside design is).
// It takes the library and the conformance kit from the repository's root package by path (as
// swift-nio's Benchmarks/), so that depending on `Stepping` or the kit drags none of this in. Its
// products: the `stepbench` tool, and the tool as a library. Pinned exactly: the bench's numbers
// depend on these versions.
//
// Allocators: `stepbench` (StepBenchKit) links jemalloc and reads its exact statistics; the
// package-benchmark suite (Benchmarks/SteppingBenchmarks) counts mallocs with
// malloc-interposer. Both measure the same scenarios from StepBenchScenarios, which links no
// allocator, so neither binary carries the other's allocator. ThreadSanitizer, which must
// intercept malloc itself, runs the root package's tests, which link no allocator.

/// The library under measure and the conformance kit, from the root package.
let stepping = Target.Dependency.product(name: "Stepping", package: "StepBench")
let kit = Target.Dependency.product(name: "SteppingConformance", package: "StepBench")

let products: [Product] = [
    .executable(name: "stepbench", targets: ["stepbench"]),
    // The tool as a library: an executable of another package calls StepBench.main(designs:).
    .library(name: "StepBenchCLI", targets: ["StepBenchCLI"]),
]
let targets: [Target] = [
    // The measured window's edges as callgrind client requests (needs Debian's `valgrind`
    // package for <valgrind/callgrind.h>; scripts/lib/ensure-deps installs it).
    .target(name: "CCallgrind"),
    // The history's change-point search (E-divisive means, permutation tests): compiled optimised
    // even in a debug build, where the tests run it on thousands of series.
    .target(name: "StepBenchChangePoints", dependencies: [kit], swiftSettings: [.unsafeFlags(["-O"])]),
    .target(
        name: "StepBenchScenarios",
        dependencies: [
            stepping, kit, "CCallgrind",
            .product(name: "OpenCombine", package: "OpenCombine"),
            .product(name: "OpenCombineDispatch", package: "OpenCombine"),
            .product(name: "Histogram", package: "hdrhistogram-swift"),
        ]
    ),
    // stepbench with deliberately broken designs (a crash, a hang, a rule broken at the n-th
    // input, a late request ahead), through the public products: scripts/tests/test_faults.py runs it.
    .executableTarget(
        name: "StepBenchFaults",
        dependencies: ["StepBenchCLI", stepping, .product(name: "OpenCombine", package: "OpenCombine")],
        path: "Tests/StepBenchFaults"),
    // The measuring targets: each tool links its allocator (above).
    .systemLibrary(
        name: "CJemalloc",
        pkgConfig: "jemalloc",
        providers: [.apt(["libjemalloc-dev"])]
    ),
    .target(name: "CJemallocConfig"),
    .target(
        name: "StepBenchKit",
        dependencies: [stepping, "StepBenchScenarios", "StepBenchChangePoints", "CJemalloc", "CJemallocConfig"]
    ),
    .target(
        name: "StepBenchCLI",
        dependencies: [
            "StepBenchKit", stepping, kit,
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ]
    ),
    // stepbench: the tool with the peers (what users would pick instead, Benchmarks/Peers/) beside the
    // built-in designs, brought in as any outside design is.
    .executableTarget(
        name: "stepbench",
        dependencies: ["StepBenchCLI", "StepBenchScenarios", .product(name: "StepPeers", package: "StepPeers")]),
    .testTarget(
        name: "StepBenchKitTests",
        dependencies: [
            "StepBenchKit", "StepBenchScenarios", "StepBenchCLI", stepping, kit,
            .product(name: "OpenCombine", package: "OpenCombine"),
        ]
    ),
    .executableTarget(
        name: "SteppingBenchmarks",
        dependencies: [
            stepping, "StepBenchScenarios",
            .product(name: "Benchmark", package: "benchmark"),
        ],
        path: "Benchmarks/SteppingBenchmarks",
        plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
    ),
]

let package = Package(
    name: "Benchmarks",
    // Linux only: jemalloc (pkg-config), valgrind's header, callgrind. The line below is the
    // library's minimum, for a manifest that a Mac can at least read.
    platforms: [.macOS(.v15)],
    products: products,
    // `swift build --traits Counting`: the counting build (scripts/lib/build-release), the
    // library's contention counters compiled in. Only the library and what depends on it
    // recompile, in the same build folder: the pinned dependencies are built once.
    traits: [
        .trait(name: "Counting", description: "The counting build: the library's contention counters compiled in")
    ],
    dependencies: [
        .package(
            name: "StepBench", path: "..",
            traits: [.defaults, .trait(name: "StepBenchCounting", condition: .when(traits: ["Counting"]))]),
        .package(name: "StepPeers", path: "Peers"),
        .package(url: "https://github.com/OpenCombine/OpenCombine", exact: "0.14.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", exact: "1.8.2"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", exact: "0.2.0"),
        // MallocInterposer only: the default traits also name a runtime interposer that is not
        // mirrored here (resolution fails without this line).
        .package(url: "https://github.com/ordo-one/benchmark", exact: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: targets
)
