/// A small, strict XML reader for the XML lyric formats (Migu, the QRC wrapper, TTML) and, through
/// `package` access, KTVScore's MusicXML.
///
/// It builds a tree of elements with attributes, text and 1-based line numbers, and reports the
/// first structural error with its line. No DTDs, no namespaces: lyric XML uses neither, and a
/// self-contained reader keeps errors precise and the library free of libxml2.
package struct XMLElement {
    package var name: String
    package var attributes: [(String, String)]
    package var children: [XMLElement]
    /// All the element's own text (between its children too), in order.
    package var text: String
    package var line: Int
    /// Mixed content, for formats whose spacing lives between elements (TTML's spans): the text
    /// before the first child, and each child's `tail`, the text after it up to the next (kept only
    /// when parsed with `mixedContent`).
    package var leadingText = ""
    package var tail = ""

    package func attribute(_ key: String) -> String? { attributes.first { $0.0 == key }?.1 }
    package func child(_ key: String) -> XMLElement? { children.first { $0.name == key } }
    package func children(_ key: String) -> [XMLElement] { children.filter { $0.name == key } }
}

package struct XMLError: Error {
    package var line: Int
    package var message: String
}

package struct MiniXML {
    private let b: [UInt8]
    private var i = 0
    private var line = 1
    /// Elements open around the one being read: bounded, so hostile nesting cannot exhaust the stack.
    private var depth = 0
    /// Elements nest at most this deep (lyric XML uses five levels; the JSON reader allows 64 too).
    static let maxDepth = 64

    /// Whether elements keep `leadingText` and `tail`: only TTML reads them, and a string for every
    /// gap between elements made Migu XML half again slower to read.
    private let mixedContent: Bool

    init(_ bytes: [UInt8], mixedContent: Bool = false) {
        b = bytes
        self.mixedContent = mixedContent
    }

    /// The document's root element. `mixedContent` keeps the text between child elements
    /// (`leadingText`, `tail`) too.
    package static func parse(_ bytes: [UInt8], mixedContent: Bool = false) throws(XMLError) -> XMLElement {
        var p = MiniXML(bytes, mixedContent: mixedContent)
        return try p.document()
    }

    private mutating func document() throws(XMLError) -> XMLElement {
        try skipMisc()
        guard i < b.count, b[i] == ASCII.langle else {
            throw XMLError(line: line, message: "no root element: the document must start with `<`")
        }
        let root = try element()
        try skipMisc()
        if i < b.count {
            throw XMLError(line: line, message: "content after the root element `</\(root.name)>`")
        }
        return root
    }

    /// Skips spaces, the declaration, comments and processing instructions between elements.
    private mutating func skipMisc() throws(XMLError) {
        while i < b.count {
            let c = b[i]
            if c == ASCII.lf { line += 1; i += 1 } else if c == ASCII.space || c == ASCII.tab || c == ASCII.cr { i += 1 } else if startsWith("<?") {
                try skip(until: "?>")
            } else if startsWith("<!--") {
                try skip(until: "-->")
            } else if startsWith("<!DOCTYPE") {
                try skip(until: ">")
            } else {
                return
            }
        }
    }

    private func startsWith(_ s: StaticString) -> Bool {
        let n = s.utf8CodeUnitCount
        guard b.count - i >= n else { return false }
        return s.withUTF8Buffer { p in (0..<n).allSatisfy { b[i + $0] == p[$0] } }
    }

    private mutating func skip(until s: StaticString) throws(XMLError) {
        let startLine = line
        while i < b.count {
            if startsWith(s) { i += s.utf8CodeUnitCount; return }
            if b[i] == ASCII.lf { line += 1 }
            i += 1
        }
        throw XMLError(line: startLine, message: "unterminated markup: no closing `\(s)`")
    }

    private static func isNameByte(_ c: UInt8) -> Bool {
        ASCII.isLetter(c) || ASCII.isDigit(c) || c == 0x5F || c == ASCII.minus || c == ASCII.dot || c == ASCII.colon || c >= 0x80
    }

    private mutating func name() throws(XMLError) -> String {
        let s = i
        while i < b.count, Self.isNameByte(b[i]) { i += 1 }
        guard i > s else { throw XMLError(line: line, message: "expected a tag or attribute name") }
        return String(decoding: b[s..<i], as: UTF8.self)
    }

    private mutating func spaces() {
        while i < b.count, b[i] == ASCII.space || b[i] == ASCII.tab || b[i] == ASCII.cr || b[i] == ASCII.lf {
            if b[i] == ASCII.lf { line += 1 }
            i += 1
        }
    }

    private mutating func element() throws(XMLError) -> XMLElement {
        let elementLine = line
        depth += 1
        defer { depth -= 1 }
        guard depth <= Self.maxDepth else {
            throw XMLError(line: line, message: "elements are nested more than \(Self.maxDepth) deep; lyric XML needs a handful of levels")
        }
        i += 1  // `<`
        let tag = try name()
        var attributes: [(String, String)] = []
        while true {
            spaces()
            guard i < b.count else { throw XMLError(line: elementLine, message: "unterminated start tag `<\(tag)`") }
            if b[i] == 0x2F {  // `/>`
                guard i + 1 < b.count, b[i + 1] == ASCII.rangle else {
                    throw XMLError(line: line, message: "expected `/>` in `<\(tag)`")
                }
                i += 2
                return XMLElement(name: tag, attributes: attributes, children: [], text: "", line: elementLine)
            }
            if b[i] == ASCII.rangle { i += 1; break }
            let key = try name()
            spaces()
            guard i < b.count, b[i] == 0x3D else {
                throw XMLError(line: line, message: "attribute `\(key)` of `<\(tag)>` has no `=\"value\"`")
            }
            i += 1
            spaces()
            guard i < b.count, b[i] == 0x22 || b[i] == 0x27 else {
                throw XMLError(line: line, message: "attribute `\(key)` of `<\(tag)>` must be quoted")
            }
            let quote = b[i]
            i += 1
            let s = i
            let valueLine = line
            while i < b.count, b[i] != quote {
                if b[i] == ASCII.lf { line += 1 }
                i += 1
            }
            guard i < b.count else { throw XMLError(line: valueLine, message: "unterminated value of attribute `\(key)`") }
            attributes.append((key, try Self.unescape(b[s..<i], line: valueLine)))
            i += 1
        }
        var children: [XMLElement] = []
        var text: [UInt8] = []
        var childAt: [Int] = []   // where in `text` each child sits
        while true {
            guard i < b.count else {
                throw XMLError(line: elementLine, message: "element `<\(tag)>` is never closed (missing `</\(tag)>`)")
            }
            let c = b[i]
            if c == ASCII.langle {
                if startsWith("</") {
                    i += 2
                    let closeLine = line
                    let closing = try name()
                    spaces()
                    guard i < b.count, b[i] == ASCII.rangle, closing == tag else {
                        throw XMLError(line: closeLine, message: "`</\(closing)>` does not close `<\(tag)>` (opened on line \(elementLine))")
                    }
                    i += 1
                    let t = try Self.unescape(text[...], line: elementLine)
                    var element = XMLElement(name: tag, attributes: attributes, children: children, text: t, line: elementLine)
                    if mixedContent, !children.isEmpty {
                        element.leadingText = try Self.unescape(text[0..<childAt[0]], line: elementLine)
                        for k in children.indices {
                            let end = k + 1 < children.count ? childAt[k + 1] : text.count
                            element.children[k].tail = try Self.unescape(text[childAt[k]..<end], line: elementLine)
                        }
                    }
                    return element
                } else if startsWith("<!--") {
                    try skip(until: "-->")
                } else if startsWith("<![CDATA[") {
                    i += 9
                    let s = i
                    try skip(until: "]]>")
                    text.append(contentsOf: Self.escapeForCDATA(b[s..<(i - 3)]))
                } else if startsWith("<?") {
                    try skip(until: "?>")
                } else {
                    childAt.append(text.count)
                    children.append(try element())
                }
            } else {
                if c == ASCII.lf { line += 1 }
                text.append(c)
                i += 1
            }
        }
    }

    /// CDATA text is literal; escape `&` so the shared unescape leaves it as written.
    private static func escapeForCDATA(_ s: ArraySlice<UInt8>) -> [UInt8] {
        var out: [UInt8] = []
        for c in s { if c == 0x26 { out.append(contentsOf: Array("&amp;".utf8)) } else { out.append(c) } }
        return out
    }

    /// `lenient`: an `&` that does not start a known entity is kept as written instead of being an
    /// error (QRC writers put raw `&` into `LyricContent`, docs/lyric-formats.md §3.2).
    static func unescape(_ s: ArraySlice<UInt8>, line: Int, lenient: Bool = false) throws(XMLError) -> String {
        guard s.contains(0x26) else { return String(decoding: s, as: UTF8.self) }
        var out: [UInt8] = []
        var k = s.startIndex
        while k < s.endIndex {
            if s[k] != 0x26 { out.append(s[k]); k += 1; continue }
            guard let semi = s[k...].firstIndex(of: 0x3B), semi - k <= 10 else {
                if lenient { out.append(0x26); k += 1; continue }
                throw XMLError(line: line, message: "a bare `&` must be written `&amp;`")
            }
            let ent = String(decoding: s[(k + 1)..<semi], as: UTF8.self)
            switch ent {
            case "amp": out.append(0x26)
            case "lt": out.append(ASCII.langle)
            case "gt": out.append(ASCII.rangle)
            case "quot": out.append(0x22)
            case "apos": out.append(0x27)
            default:
                var scalar: UInt32?
                if ent.hasPrefix("#x") || ent.hasPrefix("#X") { scalar = UInt32(ent.dropFirst(2), radix: 16) } else if ent.hasPrefix("#") { scalar = UInt32(ent.dropFirst()) }
                guard let v = scalar, let u = Unicode.Scalar(v) else {
                    if lenient { out.append(0x26); k += 1; continue }
                    throw XMLError(line: line, message: "unknown entity `&\(ent);`")
                }
                out.append(contentsOf: Array(String(Character(u)).utf8))
            }
            k = semi + 1
        }
        return String(decoding: out, as: UTF8.self)
    }
}
