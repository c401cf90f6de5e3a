import Foundation
import Testing
import KTVCore
@testable import KTVAudio

final class TempDir {
    let url: URL
    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("ktv-audio-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(at: url) }
    func path(_ name: String) -> String { url.appendingPathComponent(name).path }
}

func sine(_ hz: Double, seconds: Double, rate: Double, amplitude: Float = 0.5) -> [Float] {
    (0..<Int(seconds * rate)).map { amplitude * Float(sin(2 * Double.pi * hz * Double($0) / rate)) }
}

/// Frequency of a sine by counting upward zero crossings, interpolated.
func measuredFrequency(_ x: [Float], rate: Double) -> Double {
    var crossings: [Double] = []
    for i in 1..<x.count where x[i - 1] < 0 && x[i] >= 0 {
        crossings.append(Double(i - 1) + Double(-x[i - 1] / (x[i] - x[i - 1])))
    }
    guard crossings.count > 2 else { return 0 }
    return Double(crossings.count - 1) / ((crossings.last! - crossings.first!) / rate)
}

@Suite struct AudioIOTests {
    @Test(arguments: [AudioFileFormat.wav16, .wav24, .wavFloat, .flac16, .flac24])
    func writeThenReadRoundTrips(format: AudioFileFormat) throws {
        let dir = try TempDir()
        let ext = format.rawValue.hasPrefix("flac") ? "flac" : "wav"
        let path = dir.path("t.\(ext)")
        let left = sine(440, seconds: 0.5, rate: 48000), right = sine(660, seconds: 0.5, rate: 48000, amplitude: 0.25)
        try AudioBuffer(sampleRate: 48000, channels: [left, right]).write(path: path, format: format)
        let (buf, info) = try AudioBuffer.read(path: path)
        #expect(info.channels == 2)
        #expect(info.sampleRate == 48000)
        #expect(info.frames == 24000)
        #expect(info.container == (ext == "flac" ? "FLAC" : "WAV"))
        let tolerance: Float = format == .wavFloat ? 0 : (format.rawValue.hasSuffix("16") ? 1.0 / 32768 : 1.0 / 8_388_608)
        let maxErr = zip(buf.channels[0], left).map { abs($0 - $1) }.max()!
        #expect(maxErr <= tolerance)
        #expect(buf.channels[1].count == right.count)
        // Nothing but the file itself is left in the folder (the temporary was renamed).
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.url.path) == ["t.\(ext)"])
    }

    @Test func streamingReadCoversTheWholeFileInBlocks() throws {
        let dir = try TempDir()
        let path = dir.path("s.wav")
        let x = (0..<100_003).map { Float($0 % 1000) / 1000 - 0.5 }
        try AudioBuffer(sampleRate: 8000, channels: [x]).write(path: path, format: .wavFloat)
        let r = try AudioReader(path: path)
        var block: [Float] = []
        var all: [Float] = []
        while true {
            let n = try r.read(into: &block, frames: 4096)
            if n == 0 { break }
            all += block[0..<n]
        }
        #expect(all == x)
        try r.seek(toFrame: 100_000)
        #expect(try r.read(into: &block, frames: 10) == 3)
        #expect(Array(block[0..<3]) == Array(x[100_000...]))
    }

    @Test func missingFileIsNamed() {
        #expect(throws: AudioError.unreadable(path: "/nonexistent-ktv/a.wav", reason: "no such file")) {
            try AudioReader(path: "/nonexistent-ktv/a.wav")
        }
    }

    @Test func unsupportedContainerIsNamed() throws {
        let dir = try TempDir()
        let path = dir.path("song.m4a")
        try Data([0, 0, 0, 0x20] + Array("ftypM4A ".utf8) + [UInt8](repeating: 0, count: 64)).write(to: URL(fileURLWithPath: path))
        do {
            _ = try AudioReader(path: path)
            Issue.record("expected an error")
        } catch {
            // libsndfile refuses it, FFmpeg opens it and finds no index: the message says what an MP4 lacks.
            #expect(String(describing: error).hasPrefix("\(path): cannot read audio: the MP4 has no index (no moov box"), "\(error)")
        }
        let text = dir.path("notes.wav")
        try "just text, not audio".write(toFile: text, atomically: true, encoding: .utf8)
        #expect(throws: AudioError.self) { try AudioReader(path: text) }
    }

    @Test func zeroLengthAudioIsAnError() throws {
        let dir = try TempDir()
        let path = dir.path("empty.wav")
        let w = try AudioWriter(path: path, sampleRate: 44100, channels: 2, format: .wav16)
        try w.finish()
        #expect(throws: AudioError.empty(path: path)) { try AudioReader(path: path) }
    }

    @Test func writerWithoutFinishLeavesNothing() throws {
        let dir = try TempDir()
        do {
            let w = try AudioWriter(path: dir.path("x.wav"), sampleRate: 8000, channels: 1, format: .wav16)
            try w.write(mono: [0.1, 0.2])
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.url.path).isEmpty)
    }

    @Test func writeIntoMissingFolderFails() {
        #expect(throws: AudioError.cannotWrite(path: "/nonexistent-ktv/x.wav", reason: "folder /nonexistent-ktv does not exist")) {
            try AudioWriter(path: "/nonexistent-ktv/x.wav", sampleRate: 8000, channels: 1, format: .wav16)
        }
    }
}

@Suite struct ResamplerTests {
    @Test(arguments: [(44100.0, 16000.0), (48000.0, 22050.0), (16000.0, 44100.0)])
    func frequencyAndLengthArePreserved(from: Double, to: Double) throws {
        let x = sine(441, seconds: 2, rate: from)
        let y = try Resampler.resample(x, from: from, to: to)
        #expect(abs(y.count - Int(2 * to)) <= 2)
        #expect(abs(measuredFrequency(y, rate: to) - 441) < 0.05)
    }

    @Test func streamingMatchesWholeSignal() throws {
        let x = sine(300, seconds: 1, rate: 44100)
        let whole = try Resampler.resample(x, from: 44100, to: 16000)
        let r = try Resampler(inputRate: 44100, outputRate: 16000)
        var pieces: [Float] = []
        var i = 0
        while i < x.count {
            pieces += try r.process(Array(x[i..<min(x.count, i + 1234)]))
            i += 1234
        }
        pieces += try r.flush()
        #expect(pieces.count == whole.count)
        #expect(zip(pieces, whole).map { abs($0 - $1) }.max()! < 1e-4)
    }

    @Test func rejectsNonPositiveRates() {
        #expect(throws: AudioError.self) { try Resampler(inputRate: 0, outputRate: 16000) }
    }
}

@Suite struct FFTTests {
    @Test func inverseOfForwardIsIdentity() {
        let f = RealFFT(size: 1000)
        let x = (0..<1000).map { Float(sin(Double($0) * 0.37) + 0.1 * Double($0 % 7)) }
        var re: [Float] = [], im: [Float] = [], y: [Float] = []
        f.forward(x, re: &re, im: &im)
        f.inverse(re: re, im: im, into: &y)
        #expect(zip(x, y).map { abs($0 - $1) }.max()! < 1e-4)
    }

    @Test func crossCorrelationFindsTheLag() {
        var rng = SeededGenerator(seed: 5)
        let b = (0..<8000).map { _ in Float.random(in: -1...1, using: &rng) }
        let a = [Float](repeating: 0, count: 137) + b.dropLast(137)  // b delayed by 137 samples
        let c = CrossCorrelation.compute(a, b, maxLag: 500)
        let peak = c.indices.max { c[$0] < c[$1] }! - 500
        #expect(peak == 137)
    }

    @Test(arguments: [(1, 2), (1000, 1000), (1001, 1024), (4097, 4320)])
    func goodSizes(n: Int, expected: Int) {
        #expect(RealFFT.goodSize(atLeast: n) == expected)
    }

    @Test(arguments: [(1, 2), (1000, 1024), (1001, 1024), (960, 960), (536, 576), (4097, 4608)])
    func fastSizes(n: Int, expected: Int) {
        #expect(RealFFT.fastSize(atLeast: n) == expected)
    }
}
