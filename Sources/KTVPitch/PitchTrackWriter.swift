import Foundation
import KTVCore
import KTVLyrics

/// The file formats a pitch track is written in.
public enum PitchTrackFormat: String, Sendable, CaseIterable {
    /// `time_s,f0_hz,confidence`.
    case csv
    /// The track with its settings, latency and frames.
    case json
    /// Agora's binary pitch v1: a 10 ms float64 Hz contour.
    case agoraBinary = "agora-bin"
    /// Agora's `pitchDatas` note segments (MIDI note numbers).
    case agoraNotes = "agora-json"

    /// Checks a track made with frames of `hopMs` can be written in this format.
    public func check(hopMs: Double) throws(ParameterError) {
        if self == .agoraBinary && hopMs != 10 {
            throw ParameterError(name: "hopMs", value: PitchTrackWriter.number(hopMs), allowed: "10 for \(rawValue) (a 10 ms contour)")
        }
    }

    /// The track in this format; `input` names the recording in the JSON.
    public func bytes(_ track: PitchTrack, input: String) -> [UInt8] {
        switch self {
        case .csv: return Array(PitchTrackWriter.csv(track).utf8)
        case .json: return Array(PitchTrackWriter.json(track, input: input).serialized().utf8)
        case .agoraBinary: return PitchTrackWriter.agoraBinary(track)
        case .agoraNotes: return Array(PitchTrackWriter.agoraNotes(track).serialized().utf8)
        }
    }
}

/// Serializations of a pitch track.
public enum PitchTrackWriter {
    /// 10 → "10", 12.5 → "12.5".
    static func number(_ v: Double) -> String { v == v.rounded() && abs(v) < 1e15 ? String(Int(v)) : String(v) }

    /// `v` with three decimals, rounded half away from zero (integer arithmetic: `String(format:)`
    /// cost a fifth of a whole tracking run).
    static func appendFixed3(_ v: Double, to out: inout [UInt8]) {
        var m = Int((abs(v) * 1000).rounded())
        if v < 0 && m != 0 { out.append(UInt8(ascii: "-")) }
        let whole = m / 1000
        m %= 1000
        out.append(contentsOf: String(whole).utf8)
        out.append(UInt8(ascii: "."))
        out.append(UInt8(ascii: "0") + UInt8(m / 100))
        out.append(UInt8(ascii: "0") + UInt8((m / 10) % 10))
        out.append(UInt8(ascii: "0") + UInt8(m % 10))
    }

    /// `time_s,f0_hz,confidence`, f0 0 when unvoiced.
    public static func csv(_ t: PitchTrack) -> String {
        var out: [UInt8] = Array("time_s,f0_hz,confidence\n".utf8)
        out.reserveCapacity(t.contour.count * 24 + 32)
        let c = t.contour
        for k in c.timesS.indices {
            appendFixed3(c.timesS[k], to: &out)
            out.append(UInt8(ascii: ","))
            appendFixed3(c.f0Hz[k] ?? 0, to: &out)
            out.append(UInt8(ascii: ","))
            appendFixed3(t.confidence[k], to: &out)
            out.append(UInt8(ascii: "\n"))
        }
        return String(decoding: out, as: UTF8.self)
    }

    public static func json(_ t: PitchTrack, input: String) -> JSONValue {
        let c = t.configuration
        return .object([
            ("input", .string(input)),
            ("duration_s", .double(t.durationS)),
            ("latency_ms", t.latencyMs.map { .double(($0 * 10).rounded() / 10) } ?? .null),
            ("accompaniment_gain", t.accompanimentGain.map { .double(($0 * 10000).rounded() / 10000) } ?? .null),
            ("settings", .object([
                ("hop_ms", .double(c.hopMs)), ("min_hz", .double(c.minHz)), ("max_hz", .double(c.maxHz)),
                ("analysis_rate_hz", .double(c.analysisRateHz)), ("energy_floor_db", .double(c.energyFloorDb)),
            ])),
            ("frames", .array(t.contour.timesS.indices.map { k in
                .object([
                    ("time_s", .double((t.contour.timesS[k] * 1e6).rounded() / 1e6)),
                    ("f0_hz", t.contour.f0Hz[k].map { .double(($0 * 1000).rounded() / 1000) } ?? .null),
                    ("confidence", .double((t.confidence[k] * 1000).rounded() / 1000)),
                ])
            })),
        ])
    }

    /// Agora's binary pitch contour v1 (`AgoraPitchFormat.binary`), one value per frame.
    public static func agoraBinary(_ t: PitchTrack) -> [UInt8] {
        AgoraPitchFormat.binary(t.contour.f0Hz, intervalMs: Int((t.hopS * 1000).rounded()))
    }

    /// Agora `pitchDatas` note segments: runs of voiced frames on the same MIDI note (rounded), at least
    /// 3 frames long; `pitch` is the MIDI note number (inside Agora's 0-100 scale), times in ms.
    public static func agoraNotes(_ t: PitchTrack) -> JSONValue {
        var notes: [ReferencePitch.Note] = []
        var k = 0
        let f0 = t.contour.f0Hz
        let hopMs = t.hopS * 1000
        while k < f0.count {
            guard let f = f0[k] else { k += 1; continue }
            let note = (69 + 12 * log2(f / 440)).rounded()
            var j = k + 1
            while j < f0.count, let g = f0[j], (69 + 12 * log2(g / 440)).rounded() == note { j += 1 }
            if j - k >= 3 {
                notes.append(ReferencePitch.Note(startMs: Int((Double(k) * hopMs).rounded()),
                                                 durationMs: Int((Double(j - k) * hopMs).rounded()), value: note))
            }
            k = j
        }
        return AgoraPitchFormat.json(notes)
    }
}
