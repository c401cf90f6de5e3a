// swift-tools-version:6.0
// Coverage-guided fuzzing of ktv's readers with libFuzzer. A package of its own beside the main one,
// so the normal build is untouched; `make fuzz` in the main Makefile builds and runs it:
//
//   swift build --package-path Fuzz --scratch-path .build-fuzz -c debug --sanitize=fuzzer \
//     -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library
//
// Plain `--sanitize=fuzzer` links libFuzzer but leaves the Swift code uninstrumented (no coverage);
// the `-Xswiftc` flags instrument it. `-parse-as-library` because each harness defines
// `LLVMFuzzerTestOneInput` and libFuzzer provides `main`.
import PackageDescription
import Foundation

// A path dependency's identity is its folder's name (main, a worktree, a CI checkout…).
let mainPackage = URL(fileURLWithPath: Context.packageDirectory).deletingLastPathComponent().lastPathComponent

func harness(_ name: String) -> Target {
    .executableTarget(name: name, dependencies: ["FuzzTargets"])
}

let package = Package(
    name: "ktv-fuzz",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(path: ".."),
    ],
    targets: [
        // The code each harness runs on one input; the main package's FuzzRegressionTests run the
        // same functions on the crash inputs kept in fixtures/fuzz/.
        .target(name: "FuzzTargets", dependencies: [
            .product(name: "KTVCore", package: mainPackage),
            .product(name: "KTVLyrics", package: mainPackage),
            .product(name: "KTVAudio", package: mainPackage),
            .product(name: "KTVPitch", package: mainPackage),
            .product(name: "KTVSync", package: mainPackage),
            .product(name: "KTVScore", package: mainPackage),
        ]),
        harness("fuzz-lyrics"),
        harness("fuzz-roundtrip"),
        harness("fuzz-replay"),
        harness("fuzz-pitchtrack"),
        harness("fuzz-audio"),
        harness("fuzz-reference"),
        harness("fuzz-score"),
    ]
)
