import KTVCore

/// Every lyric or reference-pitch format ktv reads. Raw values are the names used on the command line.
public enum LyricFormat: String, Sendable, Codable, CaseIterable {
    /// Kugou KRC in its encrypted `krc1` container.
    case krc
    /// Kugou KRC plaintext (what `krc` decrypts to).
    case krcText = "krc-text"
    /// LRC with line stamps only.
    case lrc
    /// Enhanced (A2) LRC with `<mm:ss.xx>` word stamps, or the inline `[mm:ss.xx]word` style.
    case enhancedLRC = "elrc"
    /// NetEase YRC (absolute word times, timing before the text).
    case yrc
    /// QQ Music QRC body (absolute word times, timing after the text).
    case qrc
    /// QRC body inside the `<QrcInfos>` XML wrapper (`LyricContent` attribute).
    case qrcXML = "qrc-xml"
    /// Migu / Agora XML (`song/general/midi_lrc/paragraph/sentence/tone/word`, seconds, pitch in Hz).
    case miguXML = "migu-xml"
    /// Agora `.pitch` JSON (`pitchDatas` note segments).
    case agoraPitchJSON = "agora-pitch-json"
    /// Agora binary pitch contour v1 (12-byte header, float64 Hz per interval).
    case agoraPitchBinary = "agora-pitch-bin"
    /// ktv's own JSON model (what `ktv lyrics parse --format json` prints).
    case json
    /// Advanced SubStation Alpha with `{\k}` karaoke tags.
    case ass
    /// WebVTT with `<hh:mm:ss.ttt>` word timestamps.
    case webVTT = "vtt"
    /// TTML as Apple Music and AMLL use it: `<p>` lines, `<span>` words, agents, background vocals.
    case ttml
    /// Lyricify Syllable: `[p]word(start,dur)…` rows, `p` the lead or background and the side.
    case lyricifySyllable = "lys"

    /// Other names the formats go by.
    public static let aliases: [String: LyricFormat] = ["webvtt": .webVTT, "ssa": .ass]

    /// The format a name gives: its raw value or an alias (`webvtt`), in any case.
    public init?(name: String) {
        let key = name.lowercased()
        guard let format = LyricFormat(rawValue: key) ?? Self.aliases[key] else { return nil }
        self = format
    }

    /// The format's name for people ("LRC", "Migu XML").
    public var title: String {
        switch self {
        case .krc: return "KRC"
        case .krcText: return "KRC plaintext"
        case .lrc: return "LRC"
        case .enhancedLRC: return "enhanced LRC"
        case .yrc: return "YRC"
        case .qrc: return "QRC"
        case .qrcXML: return "QRC XML"
        case .miguXML: return "Migu XML"
        case .agoraPitchJSON: return "Agora pitch JSON"
        case .agoraPitchBinary: return "Agora binary pitch"
        case .json: return "ktv JSON"
        case .ass: return "ASS"
        case .webVTT: return "WebVTT"
        case .ttml: return "TTML"
        case .lyricifySyllable: return "Lyricify Syllable"
        }
    }

    /// Whether the format carries a reference pitch (a melody to score against).
    public var carriesPitch: Bool { [.miguXML, .agoraPitchJSON, .agoraPitchBinary].contains(self) }

    /// The file endings the format goes by (lower case, without the dot). `LyricsBatch` walks
    /// folders for these, so a format added here is validated in folders too.
    public var fileExtensions: [String] {
        switch self {
        case .krc: return ["krc"]
        case .krcText: return ["krc", "txt"]   // what `ktv lyrics decrypt` writes is often saved as .txt
        case .lrc: return ["lrc"]
        case .enhancedLRC: return ["lrc", "elrc"]
        case .yrc: return ["yrc"]
        case .qrc: return ["qrc"]
        case .qrcXML, .miguXML: return ["xml"]
        case .agoraPitchJSON, .agoraPitchBinary: return ["pitch"]
        case .json: return ["json"]
        case .ass: return ["ass", "ssa"]
        case .webVTT: return ["vtt"]
        case .ttml: return ["ttml"]
        case .lyricifySyllable: return ["lys"]
        }
    }
}

/// One `[key:value]` tag, kept in file order with the key as written.
public struct LyricTag: Sendable, Equatable, Codable {
    public var key: String
    public var value: String

    public init(key: String, value: String) {
        self.key = key
        self.value = value
    }
}

/// One timed word (KRC unit, YRC/QRC syllable, enhanced-LRC word, Migu tone).
public struct LyricWord: Sendable, Equatable {
    /// Absolute start, milliseconds from the start of the song (after any `[offset:]` was applied).
    public var startMs: Int
    public var durationMs: Int
    /// The text exactly as written, spaces included.
    public var text: String
    /// Per-word romanization (KRC `[language:]` type 0), nil when absent.
    public var romanization: String?
    /// KRC's undocumented third unit field (always 0 in real files), kept so it round-trips.
    public var krcField: Int
    /// Reference pitch of a Migu tone in Hz; nil when the format has none or the tone is unpitched.
    public var pitchHz: Double?
    /// Sung by the backing voices (TTML's `ttm:role="x-bg"` spans, Lyricify Syllable's background
    /// property), not the lead.
    public var background = false

    public init(startMs: Int, durationMs: Int, text: String, romanization: String? = nil,
                krcField: Int = 0, pitchHz: Double? = nil) {
        self.startMs = startMs
        self.durationMs = durationMs
        self.text = text
        self.romanization = romanization
        self.krcField = krcField
        self.pitchHz = pitchHz
    }

    public var endMs: Int { startMs + durationMs }
}

/// One lyric line with absolute times.
///
/// Stored packed in one small object (see `LinePacking`): a million-line file is a million of these,
/// and as a struct of strings over an array of word structs a three-word line took ~330 bytes
/// beyond its text (packed: 64 in all). Every property reads and writes as if it were stored;
/// `words` is decoded on each read, so loops read it once.
public struct LyricLine: Sendable, Equatable, CustomReflectable {
    // Safe to share: a storage object is never changed once made (setters replace it).
    nonisolated(unsafe) private var packed: LineStorage

    public init(startMs: Int, durationMs: Int, text: String, words: [LyricWord] = [],
                translation: String? = nil, sourceLine: Int? = nil) {
        packed = LinePacking.pack(LinePacking.Fields(startMs: startMs, durationMs: durationMs, text: text, words: words,
                                                     translation: translation, sourceLine: sourceLine))
    }

    /// A line whose text is its words' texts joined (KRC, YRC and QRC rows): no text to build or compare.
    init(startMs: Int, durationMs: Int, joining words: [LyricWord], sourceLine: Int?) {
        packed = LinePacking.pack(LinePacking.Fields(startMs: startMs, durationMs: durationMs, text: "", words: words,
                                                     translation: nil, sourceLine: sourceLine), textIsJoin: true)
    }

    /// A line packed already (`LinePacking.pack(startMs:durationMs:sourceLine:words:in:)`).
    init(packed: LineStorage) { self.packed = packed }

    /// Every field at once: one decode to read them, one encode to write them back.
    var fields: LinePacking.Fields {
        get { packed.read(LinePacking.unpack) }
        set { packed = LinePacking.pack(newValue) }
    }

    public var startMs: Int {
        get { packed.read(LinePacking.startMs) }
        set { fields.startMs = newValue }
    }

    public var durationMs: Int {
        get { packed.read(LinePacking.durationMs) }
        set { fields.durationMs = newValue }
    }

    public var text: String {
        get { packed.read(LinePacking.text) }
        set { fields.text = newValue }
    }

    public var words: [LyricWord] {
        get { packed.read(LinePacking.words) }
        set { fields.words = newValue }
    }

    /// Per-line translation (KRC `[language:]` type 1), nil when absent.
    public var translation: String? {
        get { packed.read(LinePacking.translation) }
        set { packed = packed.read { LinePacking.replacingTranslation($0, with: newValue) } }
    }

    /// Who sings the line in a duet: an agent id as TTML names it (`v1`, `v2`, `v1000` for both),
    /// or `v1`/`v2` for Lyricify Syllable's left and right; nil when the format does not say.
    public var voice: String? {
        get { packed.read(LinePacking.voice) }
        set { fields.voice = newValue }
    }

    /// 1-based line of the source text this line came from (for findings); nil for generated models.
    public var sourceLine: Int? {
        get { packed.read(LinePacking.sourceLine) }
        set { fields.sourceLine = newValue }
    }

    /// Times and blankness without decoding any text (for the validator).
    var timing: LinePacking.Timing { packed.read(LinePacking.timing) }

    /// `words.count` without decoding the words.
    var wordCount: Int { packed.read(LinePacking.wordCount) }

    /// The size of the packed form, for tests.
    var packedByteCount: Int { packed.read(LinePacking.size) }

    public var endMs: Int { startMs + durationMs }

    public static func == (a: LyricLine, b: LyricLine) -> Bool { a.fields == b.fields }

    public var customMirror: Mirror {
        let f = fields
        return Mirror(self, children: ["startMs": f.startMs, "durationMs": f.durationMs, "text": f.text, "words": f.words,
                                       "translation": f.translation as Any, "sourceLine": f.sourceLine as Any, "voice": f.voice as Any],
                      displayStyle: .struct)
    }
}

/// Reference pitch carried by a pitch file (used by scoring).
public enum ReferencePitch: Sendable, Equatable {
    /// What the numbers of a note list mean.
    public enum Scale: String, Sendable, Codable {
        /// Frequency in Hz (Migu XML tones).
        case hz
        /// Agora's 0-100 MIDI-like note index (`.pitch` JSON).
        case noteIndex = "note-index"
    }

    public struct Note: Sendable, Equatable {
        public var startMs: Int
        public var durationMs: Int
        public var value: Double

        public init(startMs: Int, durationMs: Int, value: Double) {
            self.startMs = startMs
            self.durationMs = durationMs
            self.value = value
        }
    }

    /// Note segments with absolute times.
    case notes(scale: Scale, [Note])
    /// A contour in song time (Agora's binary pitch: one value every interval, frame k at k·interval).
    case contour(PitchContour)

    /// A contour with one value every `intervalMs`, frame k at k·interval; nil = unvoiced.
    public static func contour(intervalMs: Int, hz: [Double?]) -> ReferencePitch {
        .contour(PitchContour(intervalMs: intervalMs, f0Hz: hz))
    }
}

/// The normalized lyric model every format is read into and written from.
public struct Lyrics: Sendable, Equatable {
    public var format: LyricFormat
    /// Tags in file order, as written (`offset` and `language` included).
    public var tags: [LyricTag]
    public var lines: [LyricLine]
    /// Reference pitch, for pitch files and Migu XML tones.
    public var referencePitch: ReferencePitch?
    /// The milliseconds actually added to every stamp while parsing (−offset, +offset or 0).
    public var appliedShiftMs: Int

    public init(format: LyricFormat, tags: [LyricTag] = [], lines: [LyricLine] = [],
                referencePitch: ReferencePitch? = nil, appliedShiftMs: Int = 0) {
        self.format = format
        self.tags = tags
        self.lines = lines
        self.referencePitch = referencePitch
        self.appliedShiftMs = appliedShiftMs
    }

    /// The value of the last tag with this key (case-insensitive), trimmed.
    public func tag(_ key: String) -> String? {
        // Both sides lowercased: callers may ask for `TI` as well as `ti`.
        let wanted = key.lowercased()
        return tags.last { $0.key.lowercased() == wanted }?.value
    }

    public var title: String? { tag("ti") }
    public var artist: String? { tag("ar") }
    public var album: String? { tag("al") }

    /// `[total:]` in milliseconds when it is a plain non-negative integer.
    public var totalMs: Int? {
        guard let v = tag("total")?.trimmingSpaces, let n = Int(v), n >= 0 else { return nil }
        return n
    }

    /// `[offset:]` in milliseconds, as written in the file (not applied); nil when absent or not a number.
    public var offsetMs: Int? {
        guard let v = tag("offset") else { return nil }
        return LyricTags.parseOffset(v)
    }
}

/// How `[offset:N]` is applied.
public enum OffsetSign: String, Sendable, Codable, CaseIterable {
    /// `effective = stamp − offset` (positive offset shows lyrics sooner; LRC's de-facto spec, FFmpeg).
    case subtract
    /// `effective = stamp + offset` (pylrc, Agora Android).
    case add
}

enum LyricTags {
    /// Accepts `^[+-]?\d+$` after trimming spaces.
    static func parseOffset(_ raw: String) -> Int? {
        let t = raw.trimmingSpaces
        var body = Substring(t)
        var sign = 1
        if let f = body.first, f == "+" || f == "-" {
            sign = f == "-" ? -1 : 1
            body = body.dropFirst()
        }
        guard !body.isEmpty, body.allSatisfy({ $0.isASCII && $0.isNumber }), body.count <= 9, let n = Int(body) else { return nil }
        return sign * n
    }
}

extension String {
    /// The string without leading and trailing ASCII spaces, tabs and full-width spaces.
    var trimmingSpaces: String {
        var s = Substring(self)
        while let f = s.first, f == " " || f == "\t" || f == "\u{3000}" { s = s.dropFirst() }
        while let l = s.last, l == " " || l == "\t" || l == "\u{3000}" { s = s.dropLast() }
        return String(s)
    }

    var isBlank: Bool { trimmingSpaces.isEmpty }
}
