import Foundation
import Testing
import KTVCore
@testable import KTVAudio

let ffmpegTool = "/usr/bin/ffmpeg"

/// Runs the ffmpeg tool (a test input maker, as lame is for MP3; `make setup` installs it).
@discardableResult
func ffmpeg(_ args: [String]) throws -> Int32 {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: ffmpegTool)
    p.arguments = ["-loglevel", "error", "-y"] + args
    try p.run()
    p.waitUntilExit()
    return p.terminationStatus
}

/// Audio through FFmpeg's libraries (issue 22): AAC in M4A, Opus in WebM, the audio of an MP4
/// video, read as libsndfile reads WAV, through a file or bytes in memory; cut files and files
/// without audio named as such.
@Suite(.enabled(if: FileManager.default.isExecutableFile(atPath: ffmpegTool), "needs the ffmpeg tool to make its inputs (make setup installs it)"))
struct FFmpegReaderTests {
    /// A 3 s 44.1 kHz stereo WAV: a 330 Hz sine left, 550 Hz right, and its encodings.
    func inputs(_ dir: TempDir) throws -> (wav: String, m4a: String, webm: String, video: String) {
        let rate = 44100.0
        let wav = dir.path("t.wav")
        try AudioBuffer(sampleRate: rate, channels: [sine(330, seconds: 3, rate: rate), sine(550, seconds: 3, rate: rate, amplitude: 0.3)])
            .write(path: wav, format: .wav16)
        let m4a = dir.path("t.m4a"), webm = dir.path("t.webm"), video = dir.path("t.mp4")
        #expect(try ffmpeg(["-i", wav, "-c:a", "aac", "-b:a", "192k", m4a]) == 0)
        #expect(try ffmpeg(["-i", wav, "-c:a", "libopus", "-b:a", "128k", webm]) == 0)
        #expect(try ffmpeg(["-f", "lavfi", "-i", "color=c=blue:s=64x48:r=10", "-i", wav, "-shortest", "-c:v", "mpeg4", "-c:a", "aac", video]) == 0)
        return (wav, m4a, webm, video)
    }

    func readAll(_ r: AudioReader) throws -> [[Float]] {
        var out = Array(repeating: [Float](), count: r.info.channels), block: [Float] = []
        while true {
            let n = try r.read(into: &block, frames: 4096)
            if n == 0 { break }
            for k in 0..<n { for c in 0..<r.info.channels { out[c].append(block[k * r.info.channels + c]) } }
        }
        return out
    }

    @Test func aacOpusAndAVideosAudioReadAsTheWAV() throws {
        let dir = try TempDir()
        let f = try inputs(dir)
        for (path, container, codec) in [(f.m4a, "MP4", "AAC"), (f.webm, "Matroska/WebM", "LIBOPUS"), (f.video, "MP4", "AAC")] {
            let r = try AudioReader(path: path)
            #expect(r.info.container == container, "\(path)")
            #expect(r.info.encoding == codec || (codec == "LIBOPUS" && r.info.encoding == "OPUS"), "\(path): \(r.info.encoding)")
            #expect(r.info.channels == 2)
            let channels = try readAll(r)
            #expect(r.truncation == nil, "\(path): \(String(describing: r.truncation))")
            // As long as the WAV (the encoder's priming removed), within an AAC frame; Opus decodes at 48 kHz.
            let rate = r.info.sampleRate
            #expect(abs(Double(channels[0].count) / rate - 3.0) < 0.03, "\(path): \(channels[0].count) frames at \(rate) Hz")
            // Each channel its own tone, in time: no lag against the source (the priming removed).
            #expect(abs(measuredFrequency(Array(channels[0][4410..<(channels[0].count - 4410)]), rate: rate) - 330) < 1)
            #expect(abs(measuredFrequency(Array(channels[1][4410..<(channels[1].count - 4410)]), rate: rate) - 550) < 1)
            if rate == 44100 {
                let reference = sine(330, seconds: 3, rate: rate)
                let c = CrossCorrelation.compute(Array(channels[0][0..<44100]), Array(reference[0..<44100]), maxLag: 200)
                let lag = (c.indices.max { c[$0] < c[$1] } ?? 200) - 200
                #expect(abs(lag) <= 2, "\(path): decoded \(lag) samples off the source")
            }
        }
    }

    @Test func bytesInMemoryReadAsTheFile() throws {
        let dir = try TempDir()
        let f = try inputs(dir)
        let fromFile = try readAll(try AudioReader(path: f.m4a))
        let fromMemory = try readAll(try AudioReader(bytes: try FileIO.read(f.m4a), name: "t.m4a"))
        #expect(fromFile == fromMemory)
    }

    @Test func aSeekLandsOnTheFrameAskedFor() throws {
        let dir = try TempDir()
        let f = try inputs(dir)
        let whole = try readAll(try AudioReader(path: f.m4a))
        let r = try AudioReader(path: f.m4a)
        try r.seek(toFrame: 44100)
        var block: [Float] = []
        let n = try r.read(into: &block, frames: 8192)
        #expect(n == 8192)
        let worst = (0..<n).map { abs(block[2 * $0] - whole[0][44100 + $0]) }.max() ?? 1
        #expect(worst < 1e-3, "\(worst)")
    }

    @Test func aCutFileWarnsAndAFileWithoutAudioIsNamed() throws {
        let dir = try TempDir()
        let f = try inputs(dir)
        // Index at the front (as streaming recorders write): a cut file decodes as far as it goes.
        let front = dir.path("front.m4a")
        #expect(try ffmpeg(["-i", f.wav, "-c:a", "aac", "-movflags", "+faststart", front]) == 0)
        let bytes = try FileIO.read(front)
        let cut = dir.path("cut.m4a")
        try Data(bytes.prefix(bytes.count * 6 / 10)).write(to: URL(fileURLWithPath: cut))
        let r = try AudioReader(path: cut)
        _ = try readAll(r)
        let t = try #require(r.truncation)
        #expect(t.decodedS > 1.0 && t.decodedS < 2.5 && t.claimedS.map { abs($0 - 3) < 0.05 } == true, "\(t)")
        #expect("\(t)".contains("ends before the length its header gives"))
        // Index at the end, cut off: there is nothing to decode, and the message says why.
        let tail = try FileIO.read(f.m4a)
        let cutTail = dir.path("cut-tail.m4a")
        try Data(tail.prefix(tail.count / 2)).write(to: URL(fileURLWithPath: cutTail))
        #expect { try AudioReader(path: cutTail) } throws: { "\($0)".contains("the MP4 has no index (no moov box") }
        // A video without audio.
        let silent = dir.path("video.mp4")
        #expect(try ffmpeg(["-f", "lavfi", "-i", "color=c=blue:s=64x48:r=10", "-t", "1", "-c:v", "mpeg4", silent]) == 0)
        #expect(throws: AudioError.noAudioStream(path: silent, detail: "it holds no audio stream (1 stream(s) of other kinds: video, subtitles or data)")) {
            try AudioReader(path: silent)
        }
        #expect(throws: AudioError.noAudioStream(path: f.m4a, detail: "audio stream 2 was asked for, and it holds 1 audio stream(s)")) {
            try AudioReader(path: f.m4a, stream: 2)
        }
    }

    @Test func randomBytesStayAnErrorWhateverTheirName() throws {
        let dir = try TempDir()
        var rng = SeededGenerator(seed: 5)
        for name in ["noise.bin", "noise.m4a", "noise.webm"] {
            let path = dir.path(name)
            try Data((0..<20_000).map { _ in UInt8.random(in: 0...255, using: &rng) }).write(to: URL(fileURLWithPath: path))
            #expect(throws: AudioError.self, "\(name)") { try AudioReader(path: path) }
        }
    }
}
