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
///                    texts joined), bit 3 plain words (no word has romanization, krcField or pitch)
///     start, duration, [source line], [translation], [text]
///     word count, then per word:
///       [flags]      unless plain: bit 0 romanization, bit 1 krcField ≠ 0, bit 2 pitch
///       start − previous start (the line's start for the first word), duration, text length
///       [romanization] [krcField] [pitch: 8 bytes, IEEE 754 bits little-endian]
///     the words' texts joined (usually the line's text, read in one piece)
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

        var endMs: Int { startMs + durationMs }
    }

    fileprivate static let hasSourceLine: UInt8 = 1, hasTranslation: UInt8 = 2, textStored: UInt8 = 4, plainWords: UInt8 = 8
    fileprivate static let hasRomanization: UInt8 = 1, hasKRCField: UInt8 = 2, hasPitch: UInt8 = 4

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
        if storeText { flags |= textStored }
        let plain = f.words.allSatisfy { $0.romanization == nil && $0.krcField == 0 && $0.pitchHz == nil }
        if plain { flags |= plainWords }
        out.byte(flags)
        out.int(f.startMs)
        out.int(f.durationMs)
        if let n = f.sourceLine { out.int(n) }
        if let t = f.translation { out.string(t) }
        if storeText { out.string(f.text) }
        out.varint(UInt64(f.words.count))
        var previous = f.startMs
        for w in f.words {
            if !plain {
                var wf: UInt8 = 0
                if w.romanization != nil { wf |= hasRomanization }
                if w.krcField != 0 { wf |= hasKRCField }
                if w.pitchHz != nil { wf |= hasPitch }
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
        for w in f.words { out.bytes(w.text) }
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
    }

    fileprivate struct Counter: Sink {
        var count = 0
        mutating func byte(_ b: UInt8) { count += 1 }
        mutating func bytes(_ s: String) { count += s.utf8.count }
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
    }

    // MARK: Decoding

    /// Where the parts of a packed line are, as offsets from its first byte.
    struct Layout {
        var flags: UInt8
        var startMs: Int
        var durationMs: Int
        var sourceLine: Int?
        var translation: Range<Int>?
        var text: Range<Int>?
        /// Offset of the word count.
        var words: Int
    }

    /// The fixed fields, and where the texts and the words are.
    static func layout(_ p: UnsafePointer<UInt8>) -> Layout {
        var r = Reader(p: p)
        let flags = r.byte()
        let start = r.int()
        let duration = r.int()
        let source = flags & hasSourceLine != 0 ? r.int() : nil
        let translation = flags & hasTranslation != 0 ? r.stringRange() : nil
        let text = flags & textStored != 0 ? r.stringRange() : nil
        return Layout(flags: flags, startMs: start, durationMs: duration, sourceLine: source,
                      translation: translation, text: text, words: r.i)
    }

    static func unpack(_ p: UnsafePointer<UInt8>) -> Fields {
        let l = layout(p)
        var joined = 0..<0
        let words = decodeWords(p, l, joined: &joined)
        return Fields(startMs: l.startMs, durationMs: l.durationMs, text: string(p, l.text ?? joined),
                      words: words, translation: l.translation.map { string(p, $0) }, sourceLine: l.sourceLine)
    }

    static func text(_ p: UnsafePointer<UInt8>) -> String {
        let l = layout(p)
        if let stored = l.text { return string(p, stored) }
        return string(p, skipWords(p, l).joined)
    }

    static func translation(_ p: UnsafePointer<UInt8>) -> String? {
        layout(p).translation.map { string(p, $0) }
    }

    static func words(_ p: UnsafePointer<UInt8>) -> [LyricWord] {
        var joined = 0..<0
        return decodeWords(p, layout(p), joined: &joined)
    }

    static func wordCount(_ p: UnsafePointer<UInt8>) -> Int {
        var r = Reader(p: p, i: layout(p).words)
        return r.count()
    }

    /// Bytes in the packed form (for tests).
    static func size(_ p: UnsafePointer<UInt8>) -> Int { skipWords(p, layout(p)).joined.upperBound }

    private static func string(_ p: UnsafePointer<UInt8>, _ r: Range<Int>) -> String {
        String(decoding: UnsafeBufferPointer(start: p + r.lowerBound, count: r.count), as: UTF8.self)
    }

    /// Walks the word records without making words: where the joined texts are.
    private static func skipWords(_ p: UnsafePointer<UInt8>, _ l: Layout) -> (count: Int, joined: Range<Int>) {
        var r = Reader(p: p, i: l.words)
        let count = r.count()
        let plain = l.flags & plainWords != 0
        var total = 0
        for _ in 0..<count {
            let wf = plain ? 0 : r.byte()
            r.skipVarint()
            r.skipVarint()
            total += r.count()
            if wf & hasRomanization != 0 { _ = r.stringRange() }
            if wf & hasKRCField != 0 { r.skipVarint() }
            if wf & hasPitch != 0 { r.i += 8 }
        }
        return (count, r.i..<(r.i + total))
    }

    private static func decodeWords(_ p: UnsafePointer<UInt8>, _ l: Layout, joined: inout Range<Int>) -> [LyricWord] {
        var r = Reader(p: p, i: l.words)
        let count = r.count()
        let plain = l.flags & plainWords != 0
        // Texts come after the records: lengths first, strings once the records are read.
        var words: [LyricWord] = []
        var lengths: [Int] = []
        words.reserveCapacity(count)
        lengths.reserveCapacity(count)
        var previous = l.startMs
        for _ in 0..<count {
            let wf = plain ? 0 : r.byte()
            let start = previous &+ r.int()
            previous = start
            let duration = r.int()
            lengths.append(r.count())
            let romanization = wf & hasRomanization != 0 ? string(p, r.stringRange()) : nil
            let field = wf & hasKRCField != 0 ? r.int() : 0
            var pitch: Double?
            if wf & hasPitch != 0 {
                var bits: UInt64 = 0
                for k in 0..<8 { bits |= UInt64(r.byte()) << (8 * UInt64(k)) }
                pitch = Double(bitPattern: bits)
            }
            words.append(LyricWord(startMs: start, durationMs: duration, text: "", romanization: romanization,
                                   krcField: field, pitchHz: pitch))
        }
        var at = r.i
        for k in words.indices {
            words[k].text = string(p, at..<(at + lengths[k]))
            at += lengths[k]
        }
        joined = r.i..<at
        return words
    }

    /// Reads what `encode` wrote (always one of ours, so never short).
    private struct Reader {
        let p: UnsafePointer<UInt8>
        var i = 0

        mutating func byte() -> UInt8 {
            defer { i += 1 }
            return p[i]
        }

        mutating func varint() -> UInt64 {
            var v: UInt64 = 0
            var shift: UInt64 = 0
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
