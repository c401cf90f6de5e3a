import Foundation
import Testing

/// `ktv pitch eval` end to end, on a pair worked out by hand:
/// reference unvoiced, 220, 220, 220, unvoiced; estimate unvoiced, 220, 440 (octave), -220 (unvoiced,
/// right guess), 110 (false alarm) → VR 2/3, VFA 1/2, RPA 2/3, RCA 1, OA 2/5.
@Suite struct PitchEvalCLITests {
    static let reference = "time,f0\n0,0\n0.01,220\n0.02,220\n0.03,220\n0.04,0\n"
    static let estimate = "# est\n0 0\n0.01 220\n0.02 440\n0.03 -220\n0.04 110\n"

    private func pair(_ s: Scratch) throws -> (String, String) {
        (try s.write("ref.csv", Self.reference), try s.write("est.txt", Self.estimate))
    }

    @Test func jsonReportHasEveryKey() throws {
        let s = try Scratch()
        let (ref, est) = try pair(s)
        let r = try ktv(["pitch", "eval", ref, est, "--format", "json"])
        #expect(r.status == 0)
        #expect(r.stderr == "")
        let obj = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout)) as? [String: Any])
        #expect(obj["raw_pitch_accuracy"] as? Double == 2.0 / 3)
        #expect(obj["raw_chroma_accuracy"] as? Double == 1)
        #expect(obj["voicing_recall"] as? Double == 2.0 / 3)
        #expect(obj["voicing_false_alarm"] as? Double == 0.5)
        #expect(obj["overall_accuracy"] as? Double == 0.4)
        #expect(obj["raw_pitch_accuracy_25c"] as? Double == 2.0 / 3)
        #expect(obj["raw_pitch_accuracy_10c"] as? Double == 2.0 / 3)
        #expect(obj["raw_chroma_accuracy_25c"] as? Double == 1)
        #expect(obj["raw_chroma_accuracy_10c"] as? Double == 1)
        #expect(obj["reference_frames"] as? Int == 5)
        #expect(obj["voiced_reference_frames"] as? Int == 3)
        #expect(obj["estimate_frames"] as? Int == 5)
        #expect(obj["tolerance_cents"] as? Int == 50)
        #expect(obj["pitched_frames"] as? Int == 3)
        #expect(obj["gross_error_share"] as? Double == 1.0 / 3)
        #expect(obj["median_abs_cents"] as? Double == 0)
        #expect(obj["reference"] as? String == ref)
        // Keys in a fixed order (the ordered JSON writer).
        let keys = r.out.split(separator: "\n").compactMap { line -> String? in
            let t = line.trimmingCharacters(in: .whitespaces)
            guard t.hasPrefix("\""), let end = t.dropFirst().firstIndex(of: "\"") else { return nil }
            return String(t[t.index(after: t.startIndex)..<end])
        }
        #expect(keys == ["reference", "estimate", "tolerance_cents", "reference_frames", "voiced_reference_frames",
                         "estimate_frames", "raw_pitch_accuracy", "raw_chroma_accuracy", "voicing_recall",
                         "voicing_false_alarm", "overall_accuracy", "raw_pitch_accuracy_25c", "raw_chroma_accuracy_25c",
                         "raw_pitch_accuracy_10c", "raw_chroma_accuracy_10c", "pitched_frames", "gross_error_share",
                         "median_abs_cents"])
    }

    @Test func textReport() throws {
        let s = try Scratch()
        let (ref, est) = try pair(s)
        let r = try ktv(["pitch", "eval", ref, est])
        #expect(r.status == 0)
        let lines = r.out.split(separator: "\n").map(String.init)
        #expect(lines.first == "reference \(ref): 5 frames, 3 voiced; estimate \(est): 5 frames")
        #expect(lines.contains("  raw pitch accuracy      0.6667  (50 cents)"))
        #expect(lines.contains("  raw chroma accuracy     1.0000  (50 cents)"))
        #expect(lines.contains("  voicing recall          0.6667"))
        #expect(lines.contains("  voicing false alarm     0.5000"))
        #expect(lines.contains("  overall accuracy        0.4000  (50 cents)"))
        #expect(lines.contains("  raw pitch accuracy      0.6667  (25 cents)"))
        #expect(lines.contains("  raw pitch accuracy      0.6667  (10 cents)"))
        #expect(lines.contains("  median |error|          0.0 cents"))
    }

    @Test func centsOptionChangesTheTolerance() throws {
        let s = try Scratch()
        // Estimate 30 cents sharp on every frame: correct at 50 cents, wrong at 25 and 10.
        let sharp = 220 * pow(2, 30.0 / 1200)
        let ref = try s.write("ref.txt", "0 220\n0.01 220\n")
        let est = try s.write("est.txt", "0 \(sharp)\n0.01 \(sharp)\n")
        let r50 = try ktv(["pitch", "eval", ref, est, "--format", "json"])
        let o50 = try #require(try JSONSerialization.jsonObject(with: Data(r50.stdout)) as? [String: Any])
        #expect(o50["raw_pitch_accuracy"] as? Double == 1)
        #expect(o50["raw_pitch_accuracy_25c"] as? Double == 0)
        let r25 = try ktv(["pitch", "eval", ref, est, "--format", "json", "--cents", "25"])
        #expect(r25.status == 0)
        let o25 = try #require(try JSONSerialization.jsonObject(with: Data(r25.stdout)) as? [String: Any])
        #expect(o25["tolerance_cents"] as? Int == 25)
        #expect(o25["raw_pitch_accuracy"] as? Double == 0)
        #expect(o25["overall_accuracy"] as? Double == 0)
        #expect(o25["voicing_recall"] as? Double == 1)
    }

    @Test func readsTheKtvPitchJSONAndStandardInput() throws {
        let s = try Scratch()
        let ref = try s.write("ref.csv", Self.reference)
        let json = """
        {"frames": [
          {"time_s": 0, "f0_hz": null, "confidence": 0.1},
          {"time_s": 0.01, "f0_hz": 220, "confidence": 0.9},
          {"time_s": 0.02, "f0_hz": 440, "confidence": 0.9},
          {"time_s": 0.03, "f0_hz": -220, "confidence": 0.4},
          {"time_s": 0.04, "f0_hz": 110, "confidence": 0.8}
        ]}
        """
        let est = try s.write("est.json", json)
        let r = try ktv(["pitch", "eval", ref, est, "--format", "json"])
        #expect(r.status == 0)
        let obj = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout)) as? [String: Any])
        #expect(obj["overall_accuracy"] as? Double == 0.4)
        let piped = try ktv(["pitch", "eval", ref, "-", "--format", "json"], stdin: Array(json.utf8))
        #expect(piped.status == 0)
        let o2 = try #require(try JSONSerialization.jsonObject(with: Data(piped.stdout)) as? [String: Any])
        #expect(o2["estimate"] as? String == "<stdin>")
        #expect(o2["raw_chroma_accuracy"] as? Double == 1)
    }

    @Test func malformedFileExits65NamingFileAndLine() throws {
        let s = try Scratch()
        let ref = try s.write("ref.csv", Self.reference)
        let bad = try s.write("bad.txt", "0 220\n0.01 abc\n")
        let r = try ktv(["pitch", "eval", ref, bad])
        #expect(r.status == 65)
        #expect(r.out == "")
        #expect(r.stderr == "ktv: \(bad):2: f0 `abc` is not a number\n")
        let unordered = try s.write("unordered.csv", "time,f0\n0,0\n0.02,220\n0.01,220\n")
        let r2 = try ktv(["pitch", "eval", unordered, ref])
        #expect(r2.status == 65)
        #expect(r2.stderr == "ktv: \(unordered):4: time `0.01` is not after the previous time `0.02` (line 3); times must increase\n")
        let cols = try s.write("cols.csv", "0,220,0.9\n")
        let r3 = try ktv(["pitch", "eval", ref, cols])
        #expect(r3.status == 65)
        #expect(r3.stderr == "ktv: \(cols):1: expected 2 columns (time and f0), found 3: `0,220,0.9`\n")
    }

    @Test func unreadableFileExits74() throws {
        let s = try Scratch()
        let ref = try s.write("ref.csv", Self.reference)
        let r = try ktv(["pitch", "eval", ref, "/nonexistent-ktv/est.txt"])
        #expect(r.status == 74)
        #expect(r.stderr == "ktv: /nonexistent-ktv/est.txt: cannot read: no such file\n")
        let r2 = try ktv(["pitch", "eval", s.dir.path, ref])
        #expect(r2.status == 74)
        #expect(r2.stderr == "ktv: \(s.dir.path): cannot read: is a folder, not a file\n")
    }

    @Test func usageErrorsExit64() throws {
        let s = try Scratch()
        let (ref, est) = try pair(s)
        let r = try ktv(["pitch", "eval", ref, est, "--cents", "0"])
        #expect(r.status == 64)
        #expect(r.stderr.contains("--cents = ") && r.stderr.contains("is out of range; allowed: (0, 1200] cents"))
        #expect(try ktv(["pitch", "eval", ref, est, "--format", "xml"]).status == 64)
        #expect(try ktv(["pitch", "eval", ref]).status == 64)
        #expect(try ktv(["pitch", "eval", "-", "-"]).status == 64)
    }
}
