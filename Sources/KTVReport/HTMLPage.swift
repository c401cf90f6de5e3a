import Foundation
import KTVCore

/// A page template filled in. Each template (Templates/*.html) is a whole page with four
/// placeholders: `{{csp}}`, `{{title}}`, `{{generator}}` and `{{data}}`. The data goes in as one JSON
/// block the page's script reads; nothing from a file is ever written into markup unescaped.
struct HTMLPage {
    let template: String
    /// The page's Content-Security-Policy: no network, and no script or style but the template's own
    /// (by their SHA-256), so a word that slipped through as markup still could not run.
    let contentSecurityPolicy: String

    init(template: String) {
        self.template = template
        let script = Self.hashSource(of: "script", in: template)
        let style = Self.hashSource(of: "style", in: template)
        contentSecurityPolicy = "default-src 'none'; script-src \(script); style-src \(style); img-src data:; "
            + "media-src 'self' file: data: blob:; base-uri 'none'; form-action 'none'"
    }

    /// `'sha256-…'` of the text inside the template's plain `<tag>` element (the one without
    /// attributes: the JSON block is `<script type="application/json">` and is data, not code).
    static func hashSource(of tag: String, in template: String) -> String {
        guard let open = template.range(of: "<\(tag)>"),
              let close = template.range(of: "</\(tag)>", range: open.upperBound..<template.endIndex) else { return "'none'" }
        let body = Array(template[open.upperBound..<close.lowerBound].utf8)
        return "'sha256-\(Data(SHA256.digest(body)).base64EncodedString())'"
    }

    /// The page: each placeholder replaced in one pass, so text put in is never read as a placeholder.
    func render(title: String, data: JSONValue) -> String {
        String(decoding: renderBytes(title: title, data: data), as: UTF8.self)
    }

    /// `render` as UTF-8, the data's JSON written straight into the page: a long song's page is
    /// built once, not as a JSON text, then an escaped copy, then the page around it.
    func renderBytes(title: String, data: JSONValue) -> [UInt8] {
        let values = ["csp": xmlEscaped(contentSecurityPolicy), "title": xmlEscaped(title), "generator": "ktv"]
        var out: [UInt8] = []
        var rest = template[...]
        while let open = rest.range(of: "{{") {
            out += rest[..<open.lowerBound].utf8
            guard let close = rest.range(of: "}}", range: open.upperBound..<rest.endIndex) else {
                out += "{{".utf8
                rest = rest[open.upperBound...]
                continue
            }
            let name = String(rest[open.upperBound..<close.lowerBound])
            if name == "data" {
                Self.appendScriptSafeJSON(data, to: &out)
            } else if let value = values[name] {
                out += value.utf8
            } else {
                out += "{{".utf8
                rest = rest[open.upperBound...]
                continue
            }
            rest = rest[close.upperBound...]
        }
        out += rest.utf8
        return out
    }

    static let lessThan = Array("\\u003c".utf8), greaterThan = Array("\\u003e".utf8), ampersand = Array("\\u0026".utf8)
    static let lineSeparator = Array("\\u2028".utf8), paragraphSeparator = Array("\\u2029".utf8)

    /// JSON that cannot end its `<script>` element or open a comment there: `<`, `>` and `&` written
    /// as `\u003c`, `\u003e`, `\u0026` (the same string to `JSON.parse`); U+2028 and U+2029 escaped
    /// too, for readers that take the block as script. Works on the UTF-8 bytes: a page's data is
    /// mostly the contour's numbers, and this runs once a take in a batch with pages.
    static func scriptSafeJSON(_ value: JSONValue) -> String {
        var out: [UInt8] = []
        appendScriptSafeJSON(value, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// `scriptSafeJSON`, appended to `out` as the JSON is written, a piece at a time.
    static func appendScriptSafeJSON(_ value: JSONValue, to out: inout [UInt8]) {
        value.write(pretty: false) { (piece: [UInt8]) in
            for b in piece {
                switch b {
                case 0x3C: out += lessThan
                case 0x3E: out += greaterThan
                case 0x26: out += ampersand
                default:
                    // U+2028 / U+2029 are E2 80 A8 / E2 80 A9 in UTF-8 (escapes written here are ASCII;
                    // 在 is E5 9C A8, so the two bytes before matter, and they may end the piece before).
                    if b == 0xA8 || b == 0xA9, out.count >= 2, out[out.count - 2] == 0xE2, out[out.count - 1] == 0x80 {
                        out.removeLast(2)
                        out += b == 0xA8 ? lineSeparator : paragraphSeparator
                    } else {
                        out.append(b)
                    }
                }
            }
        }
    }
}
