/// The packed bytes of one `LyricLine`: an object with the bytes allocated right after its
/// 16-byte header (an `[UInt8]` adds a count and a capacity). Never changed once made; setters
/// make a new one. The layout is self-delimiting, so no length is stored.
final class LineStorage: ManagedBuffer<Void, UInt8> {
    static func make(count: Int, _ fill: (UnsafeMutablePointer<UInt8>) -> Void) -> LineStorage {
        let made = create(minimumCapacity: count) { _ in }
        made.withUnsafeMutablePointerToElements(fill)
        // `create` called on this class makes an instance of it.
        return unsafeDowncast(made, to: LineStorage.self)
    }

    func read<R>(_ body: (UnsafePointer<UInt8>) -> R) -> R {
        withUnsafeMutablePointerToElements { body(UnsafePointer($0)) }
    }
}

/// The byte layout of a `LyricLine`. Integers are zigzag LEB128 varints (a few bytes for a
/// millisecond time), texts are UTF-8 with a varint length.
///
///     flags          bit 0 source line, bit 1 translation, bit 2 text stored (else it is the words'
///                    texts joined), bit 3 plain words (no word has romanization, krcField, pitch or
///                    the background flag), bit 4 voice
///     start, duration, [source line], [translation], [voice]
///     the words' texts joined (usually the line's text, so it is read in one piece), [text]
///     word count, then per word:
///       [flags]      unless plain: bit 0 romanization, bit 1 krcField ≠ 0, bit 2 pitch, bit 3 background
///       start − previous start (the line's start for the first word), duration, text length
///       [romanization] [krcField] [pitch: 8 bytes, IEEE 754 bits little-endian]
///
/// A real line packs into a few bytes more than its text (a 1M-line KRC: 64 bytes a line in all,
/// where strings and word structs took about 330).
enum LinePacking {
    struct Fields: Equatable {
        var startMs: Int
        var durationMs: Int
        var text: String
        var words: [LyricWord]
        var translation: String?
        var sourceLine: Int?
        var voice: String? = nil

        var endMs: Int { startMs + durationMs }
    }

    fileprivate static let hasSourceLine: UInt8 = 1, hasTranslation: UInt8 = 2, textStored: UInt8 = 4, plainWords: UInt8 = 8, hasVoice: UInt8 = 16
    fileprivate static let hasRomanization: UInt8 = 1, hasKRCField: UInt8 = 2, hasPitch: UInt8 = 4, isBackground: UInt8 = 8

    // MARK: Encoding

    /// `textIsJoin`: the caller knows the text is the words' texts joined (`f.text` is then unused).
    static func pack(_ f: Fields, textIsJoin: Bool = false) -> LineStorage {
        let storeText = !textIsJoin && !isJoin(f.text, of: f.words)
        // Counted first, so the object is allocated at its exact size.
        var counter = Counter()
        encode(f, storeText: storeText, into: &counter)
        return LineStorage.make(count: counter.count) { p in
            var writer = Writer(p: p)
            encode(f, storeText: storeText, into: &writer)
        }
    }

    private static func encode(_ f: Fields, storeText: Bool, into out: inout some Sink) {
        var flags: UInt8 = 0
        if f.sourceLine != nil { flags |= hasSourceLine }
        if f.translation != nil { flags |= hasTranslation }
        if f.voice != nil { flags |= hasVoice }
        if storeText { flags |= textStored }
        let plain = f.words.allSatisfy { $0.romanization == nil && $0.krcField == 0 && $0.pitchHz == nil && !$0.background }
        if plain { flags |= plainWords }
        out.byte(flags)
        out.int(f.startMs)
        out.int(f.durationMs)
        if let n = f.sourceLine { out.int(n) }
        if let t = f.translation { out.string(t) }
        if let v = f.voice { out.string(v) }
        var joined = 0
        for w in f.words { joined += w.text.utf8.count }
        out.varint(UInt64(joined))
        for w in f.words { out.bytes(w.text) }
        if storeText { out.string(f.text) }
        out.varint(UInt64(f.words.count))
        var previous = f.startMs
        for w in f.words {
            if !plain {
                var wf: UInt8 = 0
                if w.romanization != nil { wf |= hasRomanization }
                if w.krcField != 0 { wf |= hasKRCField }
                if w.pitchHz != nil { wf |= hasPitch }
                if w.background { wf |= isBackground }
                out.byte(wf)
            }
            // Wrapping: any two Ints round-trip, however far apart.
            out.int(w.startMs &- previous)
            previous = w.startMs
            out.int(w.durationMs)
            out.varint(UInt64(w.text.utf8.count))
            if let r = w.romanization { out.string(r) }
            if w.krcField != 0 { out.int(w.krcField) }
            if let p = w.pitchHz {
                let bits = p.bitPattern
                for k in 0..<8 { out.byte(UInt8(truncatingIfNeeded: bits >> (8 * UInt64(k)))) }
            }
        }
    }

    /// A word as a row's bytes hold it: times, KRC's third field, and where its text is.
    struct RawWord {
        var startMs: Int
        var durationMs: Int
        var krcField: Int
        var text: Range<Int>
    }

    /// A line whose text is its words' texts joined, packed straight from the row's bytes (valid
    /// UTF-8): the same bytes `pack` gives, without a String and a LyricWord made for each word
    /// first (KRC rows: a fifth of validating a folder of KRC files).
    static func pack(startMs: Int, durationMs: Int, sourceLine: Int?, words: [RawWord], in row: ArraySlice<UInt8>) -> LineStorage {
        let plain = words.allSatisfy { $0.krcField == 0 }
        func encode(into out: inout some Sink) {
            var flags: UInt8 = plain ? plainWords : 0
            if sourceLine != nil { flags |= hasSourceLine }
            out.byte(flags)
            out.int(startMs)
            out.int(durationMs)
            if let sourceLine { out.int(sourceLine) }
            var joined = 0
            for w in words { joined += w.text.count }
            out.varint(UInt64(joined))
            for w in words { out.bytes(row[w.text]) }
            out.varint(UInt64(words.count))
            var previous = startMs
            for w in words {
                if !plain { out.byte(w.krcField != 0 ? hasKRCField : 0) }
                out.int(w.startMs &- previous)
                previous = w.startMs
                out.int(w.durationMs)
                out.varint(UInt64(w.text.count))
                if w.krcField != 0 { out.int(w.krcField) }
            }
        }
        var counter = Counter()
        encode(into: &counter)
        return LineStorage.make(count: counter.count) { p in
            var writer = Writer(p: p)
            encode(into: &writer)
        }
    }

    /// The line with its translation replaced, the other bytes copied as they are: KRC's
    /// `[language:]` sets one on every line, and unpacking and packing each line's words for it
    /// was a tenth of validating a folder of translated KRC files.
    static func replacingTranslation(_ p: UnsafePointer<UInt8>, with translation: String?) -> LineStorage {
        let l = layout(p)
        var r = Reader(p: p, i: 1)
        r.skipVarint()
        r.skipVarint()
        if l.flags & hasSourceLine != 0 { r.skipVarint() }
        let head = r.i
        let rest = l.translation?.upperBound ?? head
        let end = size(p)
        var added = Counter()
        if let translation { added.string(translation) }
        let flags = translation == nil ? l.flags & ~hasTranslation : l.flags | hasTranslation
        return LineStorage.make(count: head + added.count + end - rest) { out in
            out.update(from: p, count: head)
            out[0] = flags
            var writer = Writer(p: out, at: head)
            if let translation { writer.string(translation) }
            (out + writer.at).update(from: p + rest, count: end - rest)
        }
    }

    /// Is `text` byte for byte the words' texts joined? (Not `==`: that is canonical equivalence.)
    private static func isJoin(_ text: String, of words: [LyricWord]) -> Bool {
        var joinedCount = 0
        for w in words { joinedCount += w.text.utf8.count }
        guard text.utf8.count == joinedCount else { return false }
        var text = text
        return text.withUTF8 { t in
            var at = 0
            for w in words {
                var word = w.text
                let same = word.withUTF8 { b in
                    for k in 0..<b.count where t[at + k] != b[k] { return false }
                    return true
                }
                if !same { return false }
                at += word.utf8.count
            }
            return true
        }
    }

    fileprivate protocol Sink {
        mutating func byte(_ b: UInt8)
        mutating func bytes(_ s: String)
        mutating func bytes(_ b: ArraySlice<UInt8>)
    }

    fileprivate struct Counter: Sink {
        var count = 0
        mutating func byte(_ b: UInt8) { count += 1 }
        mutating func bytes(_ s: String) { count += s.utf8.count }
        mutating func bytes(_ b: ArraySlice<UInt8>) { count += b.count }
    }

    fileprivate struct Writer: Sink {
        let p: UnsafeMutablePointer<UInt8>
        var at = 0
        mutating func byte(_ b: UInt8) {
            p[at] = b
            at += 1
        }
        mutating func bytes(_ s: String) {
            var s = s
            s.withUTF8 { b in
                guard let base = b.baseAddress else { return }
                (p + at).update(from: base, count: b.count)
                at += b.count
            }
        }
        mutating func bytes(_ b: ArraySlice<UInt8>) {
            b.withUnsafeBufferPointer { u in
                guard let base = u.baseAddress else { return }
                (p + at).update(from: base, count: u.count)
                at += u.count
            }
        }
    }

    // MARK: Decoding

    /// Where the parts of a packed line are, as offsets from its first byte.
    struct Layout {
        var flags: UInt8
        var startMs: Int
        var durationMs: Int
        var sourceLine: Int?
        var translation: Range<Int>?
        var voice: Range<Int>?
        var joined: Range<Int>
        var text: Range<Int>?
        /// Offset of the word count.
        var words: Int
    }

    static func layout(_ p: UnsafePointer<UInt8>) -> Layout {
        var r = Reader(p: p)
        let flags = r.byte()
        let start = r.int()
        let duration = r.int()
        let source = flags & hasSourceLine != 0 ? r.int() : nil
        let translation = flags & hasTranslation != 0 ? r.stringRange() : nil
        let voice = flags & hasVoice != 0 ? r.stringRange() : nil
        let joined = r.stringRange()
        let text = flags & textStored != 0 ? r.stringRange() : nil
        return Layout(flags: flags, startMs: start, durationMs: duration, sourceLine: source,
                      translation: translation, voice: voice, joined: joined, text: text, words: r.i)
    }

    // The fixed fields come first: reading one does not walk the rest.
    static func startMs(_ p: UnsafePointer<UInt8>) -> Int {
        var r = Reader(p: p, i: 1)
        return r.int()
    }

    static func durationMs(_ p: UnsafePointer<UInt8>) -> Int {
        var r = Reader(p: p, i: 1)
        r.skipVarint()
        return r.int()
    }

    static func sourceLine(_ p: UnsafePointer<UInt8>) -> Int? {
        guard p[0] & hasSourceLine != 0 else { return nil }
        var r = Reader(p: p, i: 1)
        r.skipVarint()
        r.skipVarint()
        return r.int()
    }

    static func unpack(_ p: UnsafePointer<UInt8>) -> Fields {
        let l = layout(p)
        return Fields(startMs: l.startMs, durationMs: l.durationMs, text: string(p, l.text ?? l.joined),
                      words: decodeWords(p, l), translation: l.translation.map { string(p, $0) }, sourceLine: l.sourceLine,
                      voice: l.voice.map { string(p, $0) })
    }

    static func text(_ p: UnsafePointer<UInt8>) -> String {
        let l = layout(p)
        return string(p, l.text ?? l.joined)
    }

    static func translation(_ p: UnsafePointer<UInt8>) -> String? {
        layout(p).translation.map { string(p, $0) }
    }

    static func voice(_ p: UnsafePointer<UInt8>) -> String? {
        layout(p).voice.map { string(p, $0) }
    }

    static func words(_ p: UnsafePointer<UInt8>) -> [LyricWord] { decodeWords(p, layout(p)) }

    static func wordCount(_ p: UnsafePointer<UInt8>) -> Int {
        var r = Reader(p: p, i: layout(p).words)
        return r.count()
    }

    /// What the validator reads of a line: times, and whether it has any text, with no strings made.
    struct Timing {
        struct Word {
            var startMs: Int
            var durationMs: Int
            var endMs: Int { startMs + durationMs }
        }

        var startMs: Int
        var durationMs: Int
        var sourceLine: Int?
        var words: [Word]
        /// The text and every word's text are only spaces, tabs and U+3000 (`String.isBlank`).
        var isBlank: Bool
        var endMs: Int { startMs + durationMs }
    }

    static func timing(_ p: UnsafePointer<UInt8>) -> Timing {
        let l = layout(p)
        var r = Reader(p: p, i: l.words)
        let count = r.count()
        let plain = l.flags & plainWords != 0
        var words: [Timing.Word] = []
        words.reserveCapacity(count)
        var previous = l.startMs
        for _ in 0..<count {
            let wf = plain ? 0 : r.byte()
            let start = previous &+ r.int()
            previous = start
            words.append(Timing.Word(startMs: start, durationMs: r.int()))
            r.skipVarint()
            if wf & hasRomanization != 0 { _ = r.stringRange() }
            if wf & hasKRCField != 0 { r.skipVarint() }
            if wf & hasPitch != 0 { r.i += 8 }
        }
        // The words' texts are all blank exactly when their joined bytes are (no word splits a character).
        let blank = isBlank(p, l.joined) && (l.text.map { isBlank(p, $0) } ?? true)
        return Timing(startMs: l.startMs, durationMs: l.durationMs, sourceLine: l.sourceLine, words: words, isBlank: blank)
    }

    /// Bytes only of space, tab and U+3000 (E3 80 80): what `String.isBlank` accepts, byte by byte.
    private static func isBlank(_ p: UnsafePointer<UInt8>, _ r: Range<Int>) -> Bool {
        var i = r.lowerBound
        while i < r.upperBound {
            if p[i] == ASCII.space || p[i] == ASCII.tab {
                i += 1
            } else if p[i] == 0xE3, i + 2 < r.upperBound, p[i + 1] == 0x80, p[i + 2] == 0x80 {
                i += 3
            } else {
                return false
            }
        }
        return true
    }

    /// Bytes in the packed form: the end of the last word record.
    static func size(_ p: UnsafePointer<UInt8>) -> Int {
        let l = layout(p)
        var r = Reader(p: p, i: l.words)
        let plain = l.flags & plainWords != 0
        for _ in 0..<r.count() {
            let wf = plain ? 0 : r.byte()
            r.skipVarint()
            r.skipVarint()
            r.skipVarint()
            if wf & hasRomanization != 0 { _ = r.stringRange() }
            if wf & hasKRCField != 0 { r.skipVarint() }
            if wf & hasPitch != 0 { r.i += 8 }
        }
        return r.i
    }

    private static func string(_ p: UnsafePointer<UInt8>, _ r: Range<Int>) -> String {
        String(decoding: UnsafeBufferPointer(start: p + r.lowerBound, count: r.count), as: UTF8.self)
    }

    private static func decodeWords(_ p: UnsafePointer<UInt8>, _ l: Layout) -> [LyricWord] {
        var r = Reader(p: p, i: l.words)
        let count = r.count()
        let plain = l.flags & plainWords != 0
        var words: [LyricWord] = []
        words.reserveCapacity(count)
        var previous = l.startMs
        var textAt = l.joined.lowerBound
        for _ in 0..<count {
            let wf = plain ? 0 : r.byte()
            let start = previous &+ r.int()
            previous = start
            let duration = r.int()
            let n = r.count()
            let text = string(p, textAt..<(textAt + n))
            textAt += n
            let romanization = wf & hasRomanization != 0 ? string(p, r.stringRange()) : nil
            let field = wf & hasKRCField != 0 ? r.int() : 0
            var pitch: Double?
            if wf & hasPitch != 0 {
                var bits: UInt64 = 0
                for k in 0..<8 { bits |= UInt64(r.byte()) << (8 * UInt64(k)) }
                pitch = Double(bitPattern: bits)
            }
            var word = LyricWord(startMs: start, durationMs: duration, text: text, romanization: romanization,
                                 krcField: field, pitchHz: pitch)
            word.background = wf & isBackground != 0
            words.append(word)
        }
        return words
    }

    /// Reads what `encode` wrote (always one of ours, so never short).
    private struct Reader {
        let p: UnsafePointer<UInt8>
        var i = 0

        @inline(__always)
        mutating func byte() -> UInt8 {
            defer { i += 1 }
            return p[i]
        }

        @inline(__always)
        mutating func varint() -> UInt64 {
            let first = p[i]
            i += 1
            if first < 0x80 { return UInt64(first) }
            return varintTail(first)
        }

        /// Values past one byte: most times (lengths, flags and small deltas fit in one).
        mutating func varintTail(_ first: UInt8) -> UInt64 {
            var v = UInt64(first & 0x7F)
            var shift: UInt64 = 7
            while true {
                let b = p[i]
                i += 1
                v |= UInt64(b & 0x7F) << shift
                if b < 0x80 { return v }
                shift += 7
            }
        }

        mutating func skipVarint() {
            while p[i] >= 0x80 { i += 1 }
            i += 1
        }

        @inline(__always)
        mutating func int() -> Int {
            let z = varint()
            return Int(bitPattern: UInt((z >> 1) ^ (0 &- (z & 1))))
        }

        mutating func count() -> Int { Int(varint()) }

        mutating func stringRange() -> Range<Int> {
            let n = count()
            defer { i += n }
            return i..<(i + n)
        }
    }
}

extension LinePacking.Sink {
    mutating func varint(_ value: UInt64) {
        var v = value
        while v >= 0x80 {
            byte(UInt8(v & 0x7F) | 0x80)
            v >>= 7
        }
        byte(UInt8(v))
    }

    /// Zigzag: small magnitudes of either sign take few bytes.
    mutating func int(_ n: Int) {
        let z = (UInt64(bitPattern: Int64(n)) << 1) ^ UInt64(bitPattern: Int64(n >> 63))
        varint(z)
    }

    mutating func string(_ s: String) {
        varint(UInt64(s.utf8.count))
        bytes(s)
    }
}
