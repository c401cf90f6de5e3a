/// The one place a vendor's name picks the code that implements it: the `protocol` of a message
/// picks its payload codec, a rule-set name (from the messages or the configuration) picks its rules.

/// The chorus rule sets.
public enum RuleSet: String, Sendable, CaseIterable {
    case zego, agora, tencent

    var rules: any SyncRuleSet {
        switch self {
        case .zego: return ZegoRules()
        case .agora: return AgoraRules()
        case .tencent: return TencentRules()
        }
    }

    /// The seek threshold of the vendor's code (ZEGO 30, Agora 50, Tencent 50).
    public var defaultThresholdMs: Int { rules.defaultThresholdMs }

    /// The rule set a vendor's messages imply (Volcano has no chorus rule: display only).
    public init?(protocol p: SyncProtocol) {
        guard let r = p.codec.chorusRules else { return nil }
        self = r
    }
}

extension SyncProtocol {
    var codec: any PayloadCodec {
        switch self {
        case .zego: return ZegoRules()
        case .agora: return AgoraRules()
        case .tencent: return TencentRules()
        case .volcano: return VolcanoCodec()
        }
    }
}

extension ReplayConfiguration.Rules {
    /// The rule set named; nil for `auto`, each message's own vendor.
    var forced: RuleSet? {
        switch self {
        case .auto: return nil
        case .zego: return .zego
        case .agora: return .agora
        case .tencent: return .tencent
        }
    }
}
