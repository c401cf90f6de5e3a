import KTVCore

/// The fields of a vendor payload that some codec reads, scanned once whatever the vendor: the
/// numbers by key (numbers may be written as strings: iOS sends some that way, Tencent's
/// `music_duration` always), `cmd` and `message`. Codecs take what they need with `need` (an error
/// naming `message.<key>` when it is missing) and `optional`.
struct PayloadFields {
    /// Keys of the vendor payloads that carry numbers.
    enum Key: Int, CaseIterable {
        case kProgressKey, kPointTimeKey, kState, kTotalKey, kStartTime, time, realTime, ntp, playerState,
             duration, startPlayMusicTS, music_duration, requestStopTS, musicCurrentTS, progress

        var name: StaticString {
            switch self {
            case .kProgressKey: return "kProgressKey"
            case .kPointTimeKey: return "kPointTimeKey"
            case .kState: return "kState"
            case .kTotalKey: return "kTotalKey"
            case .kStartTime: return "kStartTime"
            case .time: return "time"
            case .realTime: return "realTime"
            case .ntp: return "ntp"
            case .playerState: return "playerState"
            case .duration: return "duration"
            case .startPlayMusicTS: return "startPlayMusicTS"
            case .music_duration: return "music_duration"
            case .requestStopTS: return "requestStopTS"
            case .musicCurrentTS: return "musicCurrentTS"
            case .progress: return "progress"
            }
        }
    }

    /// NaN where the key is absent.
    var numbers = [Double](repeating: .nan, count: Key.allCases.count)
    /// Keys present with a value that is not a number.
    var bad: UInt32 = 0
    var cmd: String?
    var message: String?
    /// Where the payload is, for messages.
    let fileName: String
    let line: Int

    init(fileName: String, line: Int) {
        self.fileName = fileName
        self.line = line
    }

    func has(_ k: Key) -> Bool { !numbers[k.rawValue].isNaN || bad & (1 << UInt32(k.rawValue)) != 0 }

    /// The number under `k`, rounded to whole ms; `what` says what it is when it is missing or not a number.
    func need(_ k: Key, _ what: String) throws(SyncError) -> Int {
        func fail(_ detail: String) -> SyncError {
            .malformedLog(file: fileName, line: line, field: "message.\(k.name)", detail: detail)
        }
        if bad & (1 << UInt32(k.rawValue)) != 0 { throw fail("must be a number (\(what))") }
        let v = numbers[k.rawValue]
        if v.isNaN { throw fail("missing (\(what))") }
        guard abs(v) < 9e15 else { throw fail("\(v) is out of range") }
        return Int(v.rounded())
    }

    /// An NTP stamp under `k`, in Unix ms whichever epoch it was written in.
    func needStamp(_ k: Key, _ what: String) throws(SyncError) -> Int { NTPTime.unixMs(try need(k, what)) }

    /// The number under `k` when it is there and usable.
    func optional(_ k: Key) -> Int? {
        let v = numbers[k.rawValue]
        return v.isNaN || abs(v) >= 9e15 ? nil : Int(v.rounded())
    }

    /// Counts a payload the rules do not use (one warning per `rule` and `key`) and reads it as `.other`.
    func ignored(_ notes: inout NoteCounter, _ rule: String, key: String? = nil, _ message: @autoclosure () -> String) -> SyncMessage {
        notes.add(rule, key: key, file: fileName, line: line, message())
        return .other
    }

    // MARK: scanning

    /// Reads the `message` value at `at`: an object, or a string holding one (payloads are often
    /// logged verbatim as text).
    static func read(_ base: JSONReader, at: Int, fileName: String, line: Int) throws(SyncError) -> PayloadFields {
        var s = base
        s.offset = at
        func malformed(_ detail: String) -> SyncError { .malformedLog(file: fileName, line: line, field: "message", detail: detail) }
        var out = PayloadFields(fileName: fileName, line: line)
        if s.peek() == 0x22 {
            let text: String
            do { text = try s.string() } catch { throw malformed(error.message) }
            let bytes = Array(text.utf8)
            var failure: SyncError?
            bytes.withUnsafeBufferPointer { buf in
                var inner = JSONReader(buf)
                do throws(JSONReadError) {
                    try out.scan(&inner)
                    inner.skipSpace()
                    if !inner.atEnd { failure = malformed("the payload string has text after its JSON object") }
                } catch {
                    failure = malformed("the payload string is not a JSON object: at column \(error.byteOffset + 1): \(error.message)")
                }
            }
            if let failure { throw failure }
            return out
        }
        guard s.peek() == 0x7B else { throw malformed("must be the vendor payload: a JSON object, or a string holding one") }
        do { try out.scan(&s) } catch { throw malformed(error.message) }
        return out
    }

    private mutating func scan(_ s: inout JSONReader) throws(JSONReadError) {
        guard try s.enterObject("`{`") else { return }
        repeat {
            let key = try s.memberName()
            if s.keyEquals(key, "cmd") {
                if s.peek() == 0x22 { cmd = try s.string() } else { try s.skipValue() }
            } else if s.keyEquals(key, "message") {
                if s.peek() == 0x22 { message = try s.string() } else { try s.skipValue() }
            } else if let k = Key.allCases.first(where: { s.keyEquals(key, $0.name) }) {
                let c = s.peek()
                if c == 0x22 {
                    let str = try s.string()
                    if let v = Double(str), v.isFinite { numbers[k.rawValue] = v } else { bad |= 1 << UInt32(k.rawValue) }
                } else if let c, c == 0x2D || (c >= 0x30 && c <= 0x39) {
                    numbers[k.rawValue] = try s.number().double
                } else {
                    try s.skipValue()
                    bad |= 1 << UInt32(k.rawValue)
                }
            } else {
                try s.skipValue()
            }
        } while try s.nextMember()
    }
}
