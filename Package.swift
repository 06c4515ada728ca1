// swift-tools-version: 6.1
import PackageDescription

// Allocators: `stepbench` (StepBenchKit) links jemalloc and reads its exact statistics; the
// package-benchmark suite (Benchmarks/SteppingBenchmarks) counts mallocs with
// malloc-interposer. Both measure the same scenarios from StepBenchScenarios, which links no
// allocator, so neither binary carries the other's allocator. ThreadSanitizer, which must
// intercept malloc itself, builds the library and its tests without them:
// Tests/ThreadSanitizer/Package.swift.

let products: [Product] = [
    .library(name: "Stepping", targets: ["Stepping"]),
    .library(name: "SteppingConformance", targets: ["SteppingConformance"]),
    .library(name: "SteppingConformanceTesting", targets: ["SteppingConformanceTesting"]),
    .executable(name: "stepbench", targets: ["stepbench"]),
]
let targets: [Target] = [
    .target(
        name: "Stepping",
        dependencies: [.product(name: "OpenCombine", package: "OpenCombine")]
    ),
    // The measured window's edges as callgrind client requests (needs Debian's `valgrind`
    // package for <valgrind/callgrind.h>; scripts/lib/ensure-deps installs it).
    .target(name: "CCallgrind"),
    .target(
        name: "StepBenchScenarios",
        dependencies: [
            "Stepping", "CCallgrind",
            .product(name: "OpenCombine", package: "OpenCombine"),
            .product(name: "OpenCombineDispatch", package: "OpenCombine"),
            .product(name: "Histogram", package: "hdrhistogram-swift"),
        ]
    ),
    // The conformance kit: every rule of docs/CONFORMANCE.md as checks any design can run.
    .target(
        name: "SteppingConformance",
        dependencies: ["Stepping", "StepBenchScenarios", .product(name: "OpenCombine", package: "OpenCombine")]
    ),
    // The kit's adapter for Swift Testing: failures as issues, declared known issues as known issues.
    .target(name: "SteppingConformanceTesting", dependencies: ["SteppingConformance", "Stepping"]),
    // Helpers of every test target and the torture child; the tests take the suite's own
    // upstream and generator from StepBenchScenarios, probes and scripted upstreams from the kit.
    .target(
        name: "TestSupport",
        dependencies: ["Stepping", "StepBenchScenarios", "SteppingConformance"],
        path: "Tests/TestSupport"
    ),
    .testTarget(
        name: "SteppingTests",
        dependencies: [
            "Stepping", "StepBenchScenarios", "TestSupport", "SteppingConformanceTesting",
            .product(name: "OpenCombine", package: "OpenCombine"),
            .product(name: "OpenCombineDispatch", package: "OpenCombine"),
        ]
    ),
    // A design from outside the library, through the public products alone (no @testable).
    .testTarget(
        name: "OutsideDesignTests",
        dependencies: [
            "Stepping", "SteppingConformanceTesting", .product(name: "OpenCombine", package: "OpenCombine"),
        ]
    ),
    // The torture cases, one per child process (Tests/SteppingTests/TortureTests.swift runs it),
    // so that a case that crashes or deadlocks one design cannot hide the others.
    .executableTarget(
        name: "SteppingTorture",
        dependencies: ["Stepping", "SteppingConformance"],
        path: "Tests/SteppingTorture"
    ),
    // The measuring targets: each tool links its allocator (above).
    .systemLibrary(
        name: "CJemalloc",
        pkgConfig: "jemalloc",
        providers: [.apt(["libjemalloc-dev"])]
    ),
    .target(name: "CJemallocConfig"),
    .target(
        name: "StepBenchKit",
        dependencies: ["Stepping", "StepBenchScenarios", "CJemalloc", "CJemallocConfig"]
    ),
    .target(
        name: "StepBenchCLI",
        dependencies: [
            "StepBenchKit", "Stepping", "SteppingConformance",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ]
    ),
    .executableTarget(name: "stepbench", dependencies: ["StepBenchCLI"]),
    .testTarget(
        name: "StepBenchKitTests",
        dependencies: [
            "StepBenchKit", "StepBenchScenarios", "StepBenchCLI", "Stepping", "TestSupport",
            .product(name: "OpenCombine", package: "OpenCombine"),
        ]
    ),
    .executableTarget(
        name: "SteppingBenchmarks",
        dependencies: [
            "Stepping", "StepBenchScenarios",
            .product(name: "Benchmark", package: "benchmark"),
        ],
        path: "Benchmarks/SteppingBenchmarks",
        plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
    ),
]

let package = Package(
    name: "StepBench",
    platforms: [.macOS(.v15)],
    products: products,
    dependencies: [
        .package(url: "https://github.com/OpenCombine/OpenCombine", exact: "0.14.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", exact: "1.8.2"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", exact: "0.2.0"),
        // MallocInterposer only: the default traits also name a runtime interposer that is not
        // mirrored here (resolution fails without this line).
        .package(url: "https://github.com/ordo-one/benchmark", exact: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: targets
)
