import KTVCore

/// Options for reading lyric files.
public struct LyricsParseOptions: Sendable {
    public enum Spec {
        public static let maxTextMb = Parameter<Int>("maxTextMb", unit: "MiB", range: 1...4096, default: 64,
            "Largest lyric text read (a decrypted KRC counts its plaintext); guards against decompression bombs.")
        public static let all: [ParameterInfo] = [maxTextMb.info]
    }

    /// How `[offset:N]` is applied (default: `effective = stamp − N`).
    public var offsetSign: OffsetSign
    /// Skip detection and read as this format.
    public var format: LyricFormat?
    /// Largest lyric text read, in bytes: `Spec.maxTextMb` MiB (`init(maxTextMb:)` checks it); any
    /// positive byte count is accepted here, for exact ceilings. Bounds the decrypted KRC plaintext (a
    /// decompression bomb stops here) and every other input.
    public var maxTextBytes: Int

    /// 64 MiB: about 100 times the largest real lyric file, far below what breaks a machine.
    public static let defaultMaxTextBytes = Spec.maxTextMb.defaultValue * 1_048_576

    /// Options whose text ceiling is `maxTextMb` MiB, checked against `Spec.maxTextMb`.
    public init(offsetSign: OffsetSign = .subtract, format: LyricFormat? = nil, maxTextMb: Int) throws(ParameterError) {
        self.init(offsetSign: offsetSign, format: format, maxTextBytes: try Spec.maxTextMb.check(maxTextMb) * 1_048_576)
    }

    public init(offsetSign: OffsetSign = .subtract, format: LyricFormat? = nil,
                maxTextBytes: Int = LyricsParseOptions.defaultMaxTextBytes) {
        self.offsetSign = offsetSign
        self.format = format
        self.maxTextBytes = maxTextBytes
    }
}

/// A file read into the model, with everything noticed on the way.
public struct ParsedLyrics: Sendable {
    public var lyrics: Lyrics
    /// Findings from parsing, in line order (validation adds its own).
    public var diagnostics: [Diagnostic]
    /// The text encoding found (nil for binary pitch files).
    public var encoding: TextEncoding?
}

/// Reads any supported lyric or pitch file: detects the format from the bytes (the file name's
/// extension only breaks ties), decodes the text, decrypts KRC, and parses.
public enum LyricsReader {
    static let qrcLocalMagic: [UInt8] = [0x98, 0x25, 0xB0, 0xAC, 0xE3, 0x02, 0x83, 0x68, 0xE8, 0xFC, 0x6C]

    /// `bytes` is consumed: when the caller hands over its only copy, a UTF-8 BOM is dropped in place.
    public static func read(_ bytes: consuming [UInt8], fileName: String? = nil,
                            options: LyricsParseOptions = .init()) throws(LyricsError) -> ParsedLyrics {
        var diags: [Diagnostic] = []
        let ext = fileName.map(Self.extensionOf) ?? ""
        if bytes.isEmpty {
            throw .unrecognizedFormat(detail: "the file is empty")
        }
        if bytes.count > options.maxTextBytes {
            throw .tooLarge(limitBytes: options.maxTextBytes, detail: "the input is \(bytes.count) bytes")
        }
        if options.format == .krc || (options.format == nil && KRCContainer.isEncrypted(bytes)) {
            let plain = try KRCContainer.decrypt(bytes, maxTextBytes: options.maxTextBytes)
            var parsed = try readText(consume plain, ext: ext, forced: .krcText, options: options, diags: &diags)
            parsed.lyrics.format = .krc
            return parsed
        }
        if options.format == .agoraPitchBinary || (options.format == nil && AgoraPitchFormat.isBinaryV1(bytes)) {
            return ParsedLyrics(lyrics: try AgoraPitchFormat.parseBinary(bytes), diagnostics: [], encoding: nil)
        }
        if options.format == nil, bytes.count >= qrcLocalMagic.count, Array(bytes[0..<qrcLocalMagic.count]) == qrcLocalMagic {
            throw .unsupported(detail: "this is an encrypted QQ Music local-cache QRC (QMC1 + 3DES); ktv reads decrypted QRC only. Decrypt it first, then pass the XML or the QRC text")
        }
        return try readText(consume bytes, ext: ext, forced: options.format, options: options, diags: &diags)
    }

    /// The lyric format of `bytes` as `read` would detect it, or nil when it is none: no error, no
    /// parse. For callers that must say what a file is before (or instead of) reading it.
    public static func format(of bytes: [UInt8], fileName: String? = nil) -> LyricFormat? {
        guard !bytes.isEmpty else { return nil }
        if KRCContainer.isEncrypted(bytes) { return .krc }
        if AgoraPitchFormat.isBinaryV1(bytes) { return .agoraPitchBinary }
        guard let decoded = try? TextDecoder.decode(Array(bytes.prefix(1 << 20))) else { return nil }
        return try? detect(decoded.utf8, ext: fileName.map(Self.extensionOf) ?? "")
    }

    private static func readText(_ bytes: consuming [UInt8], ext: String, forced: LyricFormat?, options: LyricsParseOptions,
                                 diags: inout [Diagnostic]) throws(LyricsError) -> ParsedLyrics {
        let decoded: DecodedText
        if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF, TextDecoder.firstInvalidUTF8(bytes) == nil {
            // What `TextDecoder` does for valid UTF-8 after a BOM, but in place when these bytes are
            // ours alone (a decrypted KRC; a caller's last copy): its copy would hold the text twice.
            bytes.removeFirst(3)
            decoded = DecodedText(utf8: copy bytes, encoding: .utf8BOM)  // shares the buffer
        } else {
            do { decoded = try TextDecoder.decode(bytes) } catch {
                switch error {
                case let .undecodable(offset, detail): throw .undecodable(byteOffset: offset, detail: detail)
                }
            }
        }
        if decoded.encoding == .gb18030 {
            let bad = TextDecoder.firstInvalidUTF8(bytes) ?? 0
            diags.append(Diagnostic(rule: "non-utf8", severity: .warning, byteOffset: bad,
                                    message: "the file is not UTF-8 (first non-UTF-8 byte at offset \(bad)); it was read as GB18030. Re-save it as UTF-8"))
        }
        let text = decoded.utf8
        let format: LyricFormat
        if let forced { format = forced } else { format = try detect(text, ext: ext) }
        let lyrics: Lyrics
        switch format {
        case .krc, .krcText:
            lyrics = KRCParser(options: options).parse(text, format: .krcText, into: &diags)
        case .lrc, .enhancedLRC:
            lyrics = LRCParser(options: options).parse(text, into: &diags)
        case .yrc:
            lyrics = YRCParser(options: options).parse(text, into: &diags)
        case .qrc:
            lyrics = QRCParser(options: options).parse(text, format: .qrc, into: &diags)
        case .qrcXML:
            lyrics = try QRCWrapper.parse(text, options: options, into: &diags)
        case .miguXML:
            lyrics = try MiguXMLParser().parse(text, into: &diags)
        case .agoraPitchJSON:
            lyrics = try AgoraPitchFormat.parseJSON(text, encoding: decoded.encoding)
        case .agoraPitchBinary:
            lyrics = try AgoraPitchFormat.parseBinary(bytes)
        case .json:
            lyrics = try JSONModel.parse(text, encoding: decoded.encoding)
        case .ass:
            lyrics = ASSParser(options: options).parse(text, into: &diags)
        case .webVTT:
            lyrics = WebVTTParser(options: options).parse(text, into: &diags)
        case .ttml:
            lyrics = try TTMLParser(options: options).parse(text, into: &diags)
        case .lyricifySyllable:
            lyrics = LyricifySyllableParser(options: options).parse(text, into: &diags)
        }
        diags.sort { ($0.line ?? 0) < ($1.line ?? 0) }
        return ParsedLyrics(lyrics: lyrics, diagnostics: diags, encoding: decoded.encoding)
    }

    static func extensionOf(_ name: String) -> String {
        guard let dot = name.lastIndex(of: "."), !name[dot...].contains("/") else { return "" }
        return name[name.index(after: dot)...].lowercased()
    }

    /// Decides the format from the text; the extension only breaks ties (a file of tags alone).
    static func detect(_ text: [UInt8], ext: String) throws(LyricsError) -> LyricFormat {
        let head = Scan.trimLeading(text[...])
        let firstByte = head.first { !($0 == ASCII.lf || $0 == ASCII.cr || ASCII.isSpace($0)) }
        guard let firstByte else { throw .unrecognizedFormat(detail: "the file has no text (only spaces and line breaks)") }
        // All on bytes: the format is told for every file a folder holds, and String searches cost
        // more than reading most files.
        let sample = text.prefix(4096)
        var leadStart = sample.startIndex
        while leadStart < sample.endIndex {
            let c = sample[leadStart]
            if c == ASCII.space || c == ASCII.tab || c == ASCII.lf || c == ASCII.cr {
                leadStart += 1
            } else if c == 0xEF, leadStart + 2 < sample.endIndex, sample[leadStart + 1] == 0xBB, sample[leadStart + 2] == 0xBF {
                leadStart += 3   // U+FEFF
            } else {
                break
            }
        }
        let lead = sample[leadStart...]
        if Scan.hasPrefix(lead, caseInsensitive: "[script info]") || ext == "ass" || ext == "ssa" { return .ass }
        if lead.starts(with: "WEBVTT".utf8) || ext == "vtt" { return .webVTT }
        if firstByte == ASCII.langle {
            if ByteText.contains(sample, "<QrcInfos") || ByteText.contains(sample, "LyricContent=") { return .qrcXML }
            if ByteText.contains(sample, "<tt ") || ByteText.contains(sample, "<tt>") || ByteText.contains(sample, "<tt:tt") { return .ttml }
            return .miguXML
        }
        if firstByte == ASCII.lbrace {
            if ByteText.contains(sample, "\"pitchDatas\"") { return .agoraPitchJSON }
            // ktv JSON puts `format` first and `lines` after the tags, which can be long: look for
            // `lines` in the whole text once `format` is seen at the start.
            if ByteText.contains(sample, "\"format\""), ByteText.contains(text[...], "\"lines\"") {
                return .json
            }
        }
        var sawTag = false
        for row in Scan.lines(text).prefix(400) {
            let b = Scan.trimLeading(row.bytes)
            guard let f = b.first else { continue }
            if f == ASCII.lbrace, ext != "json" { return .yrc }
            guard f == ASCII.lbracket else { continue }
            // `[4]It's (18115,649)…`: a Lyricify Syllable row (QRC's timing after the text, a one-digit property).
            if let (_, from) = LyricifySyllableParser.header(b), QRCParser.nextTiming(b, from: from) != nil { return .lyricifySyllable }
            if let (_, e1) = Scan.uint(b, b.startIndex + 1), e1 < b.endIndex {
                if b[e1] == ASCII.colon { return .lrc }
                if b[e1] == ASCII.comma, let (_, e2) = Scan.uint(b, e1 + 1), e2 < b.endIndex, b[e2] == ASCII.rbracket {
                    let rest = e2 + 1
                    if KRCParser.unitHeader(b, rest) != nil { return .krcText }
                    if YRCParser.unit(b, rest) != nil { return .yrc }
                    if QRCParser.nextTiming(b, from: rest) != nil { return .qrc }
                    if KRCParser.nextUnit(b, from: rest) != nil { return .krcText }
                }
            } else if b.count > 1, b[b.startIndex + 1] == ASCII.minus, LRCParser.stamp(b, b.startIndex, close: ASCII.rbracket) != nil {
                return .lrc
            } else if case .notATag = TagRow.parse(b) {
                continue
            } else {
                sawTag = true
            }
        }
        if sawTag {
            switch ext {
            case "krc": return .krcText
            case "yrc": return .yrc
            case "qrc": return .qrc
            case "lys": return .lyricifySyllable
            default: return .lrc
            }
        }
        let nonBlank = Array(Scan.lines(text).lazy.filter { !Scan.isBlank($0.bytes) }.prefix(20))
        if !nonBlank.isEmpty, nonBlank.allSatisfy({ Double(Scan.string(Scan.trim($0.bytes))) != nil }) {
            throw .unrecognizedFormat(detail: "every line is a single number: this looks like a pitch track (one value per frame), not lyrics")
        }
        let first = nonBlank.first
        throw .unrecognizedFormat(detail: "no KRC, LRC, YRC, QRC or XML lyric rows found (line \(first?.number ?? 1) reads `\(first.map { Scan.preview($0.bytes) } ?? "")`)")
    }
}

/// The decrypted QRC document: `<QrcInfos>…<Lyric_1 LyricType="1" LyricContent="…"/>`. The body is
/// taken from the raw attribute (an XML parser would turn its line breaks into spaces).
enum QRCWrapper {
    static func parse(_ text: [UInt8], options: LyricsParseOptions, into diags: inout [Diagnostic]) throws(LyricsError) -> Lyrics {
        let key = Array("LyricContent=\"".utf8)
        guard let start = key.withUnsafeBufferPointer({ ByteText.firstIndex(of: $0, in: text[...]) }) else {
            throw .malformed(line: nil, detail: "QRC XML has no `LyricContent=\"…\"` attribute holding the lyric")
        }
        let bodyStart = start + key.count
        var end: Int?
        var j = bodyStart
        while j < text.count {
            if text[j] == 0x22 {
                var k = j + 1
                while k < text.count, ASCII.isSpace(text[k]) || text[k] == ASCII.lf || text[k] == ASCII.cr { k += 1 }
                if k + 1 < text.count, text[k] == 0x2F, text[k + 1] == ASCII.rangle { end = j; break }
            }
            j += 1
        }
        let lineBase = text[0..<bodyStart].reduce(0) { $0 + ($1 == ASCII.lf ? 1 : 0) }
        guard let end else {
            throw .malformed(line: lineBase + 1, detail: "the `LyricContent` attribute is never closed with `\"/>`")
        }
        let body: [UInt8]
        // Lenient: real files carry raw `&` in the lyric text (`Rock & Roll`); it is kept as written.
        do { body = Array(try MiniXML.unescape(text[bodyStart..<end], line: lineBase + 1, lenient: true).utf8) } catch {
            throw .malformed(line: error.line, detail: "in `LyricContent`: \(error.message)")
        }
        // Translation companions (`…ts.qrc`) carry plain LRC inside the same wrapper.
        let inner = (try? LyricsReader.detect(body, ext: "qrc")) ?? .qrc
        if inner == .lrc {
            var lyrics = LRCParser(options: options).parse(body, into: &diags)
            lyrics.lines = lyrics.lines.map { var l = $0; l.sourceLine = l.sourceLine.map { $0 + lineBase }; return l }
            return lyrics
        }
        return QRCParser(options: options, lineBase: lineBase).parse(body, format: .qrcXML, into: &diags)
    }
}
