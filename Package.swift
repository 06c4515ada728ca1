// swift-tools-version: 6.1
import PackageDescription

// StepBench's root package: the library a user adds (`Stepping`, on OpenCombine and nothing
// else), the conformance kit that checks any design against every rule of docs/CONFORMANCE.md
// (`SteppingConformance`, and `SteppingConformanceTesting` for Swift Testing), and their tests
// (Tests/: the library's, the kit's, model-based, stress and torture tests). The kit depends on
// the library, OpenCombine and the toolchain only, so `swift test --sanitize=thread` runs here.
//
// The bench (scenarios, runner, the `stepbench` tool, the package-benchmark suite, thresholds,
// the peers) is the package Benchmarks/, on this one by path, as swift-nio's Benchmarks/.

let package = Package(
    name: "StepBench",
    // Built and tested on Linux; the library and the kit use nothing Linux-only (macOS 15 for
    // Synchronization's Mutex and Atomic), untested there.
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "Stepping", targets: ["Stepping"]),
        // The conformance kit: every rule as checks any design can run.
        .library(name: "SteppingConformance", targets: ["SteppingConformance"]),
        // The kit's adapter for Swift Testing: failures as issues, declared known issues as known issues.
        .library(name: "SteppingConformanceTesting", targets: ["SteppingConformanceTesting"]),
    ],
    // StepBench's counting build (Benchmarks/'s `Counting` trait enables it): the designs count
    // what contention makes them do. Off by default; such a build is never timed.
    traits: [
        .trait(
            name: "StepBenchCounting",
            description: "Contention counters compiled into the designs (StepBench's counting build; never timed)")
    ],
    dependencies: [
        .package(url: "https://github.com/OpenCombine/OpenCombine", from: "0.14.0")
    ],
    targets: [
        .target(
            name: "Stepping",
            dependencies: [.product(name: "OpenCombine", package: "OpenCombine")],
            swiftSettings: [.define("STEPBENCH_COUNTING", .when(traits: ["StepBenchCounting"]))]
        ),
        .target(
            name: "SteppingConformance",
            dependencies: ["Stepping", .product(name: "OpenCombine", package: "OpenCombine")]
        ),
        .target(name: "SteppingConformanceTesting", dependencies: ["SteppingConformance", "Stepping"]),
        // Helpers of the test target and the torture child; the tests take the suite's upstream,
        // generator, probes and scripted upstreams from the kit.
        .target(name: "TestSupport", dependencies: ["Stepping", "SteppingConformance"], path: "Tests/TestSupport"),
        .testTarget(
            name: "SteppingTests",
            dependencies: [
                "Stepping", "TestSupport", "SteppingConformanceTesting",
                .product(name: "OpenCombine", package: "OpenCombine"),
                .product(name: "OpenCombineDispatch", package: "OpenCombine"),
            ]
        ),
        // The kit's own proof that each check can fail: a known-bad design per rule, written on
        // public API only, as a design author outside the library would.
        .testTarget(
            name: "ConformanceKitTests",
            dependencies: [
                "Stepping", "SteppingConformanceTesting", .product(name: "OpenCombine", package: "OpenCombine"),
            ]
        ),
        // The torture cases, one per child process (Tests/SteppingTests/TortureTests.swift runs
        // it), so that a case that crashes or deadlocks one design cannot hide the others.
        .executableTarget(
            name: "SteppingTorture",
            dependencies: ["Stepping", "SteppingConformance", "TestSupport"],
            path: "Tests/SteppingTorture"
        ),
    ]
)
