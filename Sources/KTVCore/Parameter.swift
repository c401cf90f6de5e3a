/// Settings declared once, as Essentia declares an algorithm's parameters: a name with its unit, a
/// range, a default and a one-line description. A configuration's `validated()` checks its values
/// against these declarations, the CLI builds its help from them, and the README's parameter tables
/// are rendered from them (a test keeps the README in step).

/// One numeric setting.
public struct Parameter<Value: Comparable & Sendable & CustomStringConvertible>: Sendable {
    /// The library's name, unit suffix included (`maxLagSamples`, `hopMs`, `minHz`).
    public let name: String
    /// The unit, as a reader would write it (`ms`, `s`, `Hz`, `dB`, `samples`), or "" for a ratio or a count.
    public let unit: String
    public let range: ClosedRange<Value>
    public let defaultValue: Value
    /// What it does, in one line.
    public let summary: String
    /// The bounds themselves are not allowed (a tolerance that must be above 0).
    public let lowerExclusive: Bool, upperExclusive: Bool
    /// How the default reads when it is not a number (`one period of minHz`).
    public let defaultText: String?

    public init(_ name: String, unit: String = "", range: ClosedRange<Value>, lowerExclusive: Bool = false, upperExclusive: Bool = false,
                default defaultValue: Value, defaultText: String? = nil, _ summary: String) {
        self.defaultText = defaultText
        self.name = name
        self.unit = unit
        self.range = range
        self.lowerExclusive = lowerExclusive
        self.upperExclusive = upperExclusive
        self.defaultValue = defaultValue
        self.summary = summary
    }

    /// The value itself when it is in range; otherwise an error naming the parameter and the range.
    @discardableResult
    public func check(_ value: Value) throws(ParameterError) -> Value {
        if let d = value as? Double, !d.isFinite {
            throw ParameterError(name: name, value: value.description, allowed: rangeText)
        }
        guard range.contains(value), !(lowerExclusive && value == range.lowerBound), !(upperExclusive && value == range.upperBound) else {
            throw ParameterError(name: name, value: value.description, allowed: rangeText)
        }
        return value
    }

    /// `20…2000 Hz`
    public var rangeText: String {
        let core = lowerExclusive || upperExclusive
            ? "\(lowerExclusive ? "(" : "[")\(Self.text(range.lowerBound)), \(Self.text(range.upperBound))\(upperExclusive ? ")" : "]")"
            : "\(Self.text(range.lowerBound))…\(Self.text(range.upperBound))"
        return core + (unit.isEmpty ? "" : " \(unit)")
    }

    /// `Frame step. 1…100 ms, default 10.` — the help line the CLI shows.
    public var help: String {
        "\(summary) \(rangeText), default \(defaultText ?? Self.text(defaultValue))."
    }

    public var info: ParameterInfo {
        ParameterInfo(name: name, unit: unit, range: rangeText, defaultValue: defaultText ?? Self.text(defaultValue), summary: summary)
    }

    /// 10 rather than 10.0; a minus sign for negatives.
    static func text(_ v: Value) -> String {
        if let d = v as? Double {
            if d == d.rounded(), abs(d) < 1e15 { return sign(String(Int(d))) }
            return sign(d.description)
        }
        return sign(v.description)
    }

    private static func sign(_ s: String) -> String { s.hasPrefix("-") ? "−" + s.dropFirst() : s }
}

/// A parameter's declaration without its type, for tables and help.
public struct ParameterInfo: Sendable, Equatable {
    public var name: String
    public var unit: String
    public var range: String
    public var defaultValue: String
    public var summary: String

    /// The README's row: `| name | range | default | summary |`.
    public var markdownRow: String { "| `\(name)` | \(range) | \(defaultValue) | \(summary) |" }

    public static let markdownHeader = "| parameter | range | default | what it does |\n|---|---|---|---|"

    public static func markdownTable(_ parameters: [ParameterInfo]) -> String {
        ([markdownHeader] + parameters.map(\.markdownRow)).joined(separator: "\n")
    }
}

/// A value outside its declared range. Names the library parameter; a front end maps the name to
/// its own spelling (a CLI flag) with `ParameterError.renamed`.
public struct ParameterError: Error, Equatable, Sendable, CustomStringConvertible {
    public var name: String
    public var value: String
    public var allowed: String

    public init(name: String, value: String, allowed: String) {
        self.name = name
        self.value = value
        self.allowed = allowed
    }

    public var description: String { "\(name) = \(value) is out of range; allowed: \(allowed)" }

    /// The same error under another name (`--max-lag-samples` for `maxLagSamples`).
    public func renamed(_ newName: String) -> ParameterError {
        ParameterError(name: newName, value: value, allowed: allowed)
    }
}

/// `text` with each library parameter name in it (a lowerCamelCase word: `minHz`, `pitchIntervalMs`;
/// plain words are prose and stay) spelt as `spell` gives it, when it gives one: how a front end
/// puts its own names (a flag, a column) into a library's message or help.
public func respellingParameters(in text: String, _ spell: (String) -> String?) -> String {
    var out = "", word = ""
    func flush() {
        if word.first?.isLowercase == true, word.contains(where: \.isUppercase), let s = spell(word) { out += s } else { out += word }
        word = ""
    }
    for ch in text {
        if ch.isASCII && (ch.isLetter || ch.isNumber) { word.append(ch) } else {
            flush()
            out.append(ch)
        }
    }
    flush()
    return out
}

/// A module's error enum with a case for a setting out of range, `invalidParameter(ParameterError)`
/// (the case itself satisfies the requirement): `init(_:)` and `invalidParameter(name:value:allowed:)`
/// make one, and `parameterError` gives the `ParameterError` back for front ends that rename parameters.
public protocol ParameterErrorWrapping: Error {
    static func invalidParameter(_ error: ParameterError) -> Self
    var parameterError: ParameterError? { get }
}

extension ParameterErrorWrapping {
    /// A declared parameter's range error.
    public init(_ error: ParameterError) {
        self = .invalidParameter(error)
    }

    /// A setting's error from its parts: its name, the value given, what is allowed.
    public static func invalidParameter(name: String, value: String, allowed: String) -> Self {
        .invalidParameter(ParameterError(name: name, value: value, allowed: allowed))
    }
}
