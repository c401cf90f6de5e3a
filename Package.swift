// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "ktv",
    platforms: [.macOS(.v13)],
    products: [
        .executable(name: "ktv", targets: ["ktv"]),
        .library(name: "KTVCore", targets: ["KTVCore"]),
        .library(name: "KTVLyrics", targets: ["KTVLyrics"]),
        .library(name: "KTVAudio", targets: ["KTVAudio"]),
        .library(name: "KTVPitch", targets: ["KTVPitch"]),
        .library(name: "KTVSync", targets: ["KTVSync"]),
        .library(name: "KTVScore", targets: ["KTVScore"]),
        .library(name: "KTVBatch", targets: ["KTVBatch"]),
        .library(name: "KTVReport", targets: ["KTVReport"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
    ],
    targets: [
        // System libraries, found with pkg-config; `make setup` installs the Debian packages.
        .systemLibrary(name: "CSndFile", pkgConfig: "sndfile",
                       providers: [.apt(["libsndfile1-dev"]), .brew(["libsndfile"])]),
        .systemLibrary(name: "CFFTW", pkgConfig: "fftw3f",
                       providers: [.apt(["libfftw3-dev"]), .brew(["fftw"])]),
        .systemLibrary(name: "CZlib", pkgConfig: "zlib",
                       providers: [.apt(["zlib1g-dev"])]),
        .systemLibrary(name: "CSoxr", pkgConfig: "soxr",
                       providers: [.apt(["libsoxr-dev"]), .brew(["libsoxr"])]),
        // FFmpeg's libraries, for what libsndfile does not decode (MP4/M4A, WebM/Matroska, video):
        // their headers (libavformat-dev, libavcodec-dev, libswresample-dev, libavutil-dev), and the
        // libraries loaded with dlopen the first time a file needs them (Sources/CFFmpeg/loader.c).
        .target(name: "CFFmpeg", linkerSettings: [.linkedLibrary("dl")]),
        // libzip, for compressed MusicXML (.mxl, a zip container): its header (libzip-dev), and the
        // library loaded with dlopen the first time an .mxl is read (Sources/CZip/loader.c).
        .target(name: "CZip", linkerSettings: [.linkedLibrary("dl")]),

        .target(name: "KTVCore"),
        .target(name: "KTVLyrics", dependencies: ["KTVCore", "CZlib"]),
        .target(name: "KTVAudio", dependencies: ["KTVCore", "CSndFile", "CSoxr", "CFFTW", "CFFmpeg"]),
        .target(name: "KTVPitch", dependencies: ["KTVCore", "KTVAudio", "KTVLyrics"]),
        // Generated test signals with known truth (tests, benchmarks, the demo fixture).
        .target(name: "KTVSynth", dependencies: ["KTVCore"]),
        // Chorus sync: progress-log reader, vendor rules, replay analysis, room simulator.
        .target(name: "KTVSync", dependencies: ["KTVCore", "KTVLyrics"]),
        // Scoring a take against a reference melody: references → notes, takes → pitch, alignment,
        // judging under a rule set, aggregation.
        .target(name: "KTVScore", dependencies: ["KTVCore", "KTVLyrics", "KTVAudio", "KTVPitch", "KTVSync", "CZip"]),
        // Scoring a manifest of takes: on every core, resumable, sharded across machines.
        .target(name: "KTVBatch", dependencies: ["KTVCore", "KTVAudio", "KTVPitch", "KTVSync", "KTVScore"]),

        // Pages people look at: a take's HTML page and a batch's dashboard, from the templates in
        // Sources/KTVReport/Templates (compiled in by the EmbedTemplates plugin, so `ktv` needs no
        // resource files beside it).
        .target(name: "KTVReport", dependencies: ["KTVCore", "KTVScore", "KTVBatch"],
                exclude: ["Templates"], plugins: ["EmbedTemplates"]),
        .executableTarget(name: "ktv-embed"),
        .plugin(name: "EmbedTemplates", capability: .buildTool(), dependencies: ["ktv-embed"]),

        .executableTarget(
            name: "ktv",
            dependencies: [
                "KTVCore", "KTVLyrics", "KTVAudio", "KTVPitch", "KTVSync", "KTVScore", "KTVBatch", "KTVReport",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]),
        .executableTarget(name: "ktv-bench", dependencies: ["KTVCore", "KTVLyrics", "KTVAudio", "KTVPitch", "KTVSynth", "KTVSync", "KTVScore", "KTVBatch", "KTVReport"]),

        .testTarget(name: "KTVCoreTests", dependencies: ["KTVCore"]),
        .testTarget(name: "KTVLyricsTests", dependencies: ["KTVLyrics", "KTVCore"]),
        .testTarget(name: "KTVPitchTests", dependencies: ["KTVPitch", "KTVAudio", "KTVCore", "KTVSynth"]),
        .testTarget(name: "KTVAudioTests", dependencies: ["KTVAudio", "KTVCore", "KTVSynth"]),
        .testTarget(name: "KTVCLITests", dependencies: ["ktv", "KTVLyrics", "KTVCore", "KTVAudio", "KTVSynth", "KTVSync", "KTVScore", "KTVBatch", "KTVReport"]),
        .testTarget(name: "KTVSyncTests", dependencies: ["KTVSync", "KTVLyrics", "KTVCore"]),
        .testTarget(name: "KTVScoreTests", dependencies: ["KTVScore", "KTVPitch", "KTVLyrics", "KTVCore", "KTVSynth"]),
        .testTarget(name: "KTVBatchTests", dependencies: ["KTVBatch", "KTVScore", "KTVCore"]),
        .testTarget(name: "KTVReportTests", dependencies: ["KTVReport", "KTVBatch", "KTVScore", "KTVCore", "KTVSynth"]),
        // The inputs the fuzzers saved (fixtures/fuzz/) through the harnesses' own code, which
        // FuzzTargets/ links to (Fuzz/Sources/FuzzTargets, the fuzz package beside this one).
        .testTarget(name: "KTVFuzzRegressionTests", dependencies: ["KTVCore", "KTVLyrics", "KTVAudio", "KTVPitch", "KTVSync", "KTVScore"]),
    ]
)
