import Foundation
import Testing
@testable import KTVLyrics
import KTVCore

/// `LyricsBatch`: what a folder walk picks up and how an input over the limit is described.
@Suite struct LyricsBatchTests {
    func folder(_ files: [String: String]) throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("ktv-lyrics-batch-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        for (name, text) in files { try Data(text.utf8).write(to: dir.appendingPathComponent(name)) }
        return dir
    }

    /// The walk took a hand-written list of endings that missed the formats added later: a folder
    /// of broken `.ttml`, `.ass`, `.vtt` and `.lys` files was "0 file(s) checked".
    @Test func aFolderWalkPicksUpEveryFormatsEnding() throws {
        for format in LyricFormat.allCases {
            #expect(!format.fileExtensions.isEmpty, "\(format)")
            for ext in format.fileExtensions { #expect(LyricsBatch.extensions.contains(ext), "\(format): .\(ext)") }
        }
        let dir = try folder([
            "a.ttml": "<tt xmlns=\"http://www.w3.org/ns/ttml\"><body><div><p begin=\"x\">a</p>",
            "b.ass": "[Script Info]\nScriptType: v4.00+\n[Events]\nFormat: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text\nDialogue: 0,0:00:0x.00,0:00:02.00,Default,,0,0,0,,{\\k50}a\n",
            "c.vtt": "WEBVTT\n\n00:00:0x.000 --> 00:00:01.000\nbad\n",
            "d.lys": "[4]word(100,\n",
            "notes.md": "not lyrics",
        ])
        defer { try? FileManager.default.removeItem(at: dir) }
        let files = try LyricsBatch.expand(dir.path).map { ($0 as NSString).lastPathComponent }
        #expect(files == ["a.ttml", "b.ass", "c.vtt", "d.lys"])
        let findings = LyricsBatch.validate(try LyricsBatch.expand(dir.path), options: .init())
        #expect(findings.allSatisfy { $0.diagnostics.contains { $0.severity == .error } }, "\(findings)")
    }
}

@Suite struct LyricsTooLargeInputTests {
    @Test func aDeviceOverTheLimitIsNotCalledEmpty() {
        let device = "\(LyricsBatch.tooLargeInput("/dev/zero", limitBytes: 64 << 20))"
        #expect(device.hasPrefix("the input is more than 67108864 bytes, over the 64 MB limit"), "\(device)")
    }
}
