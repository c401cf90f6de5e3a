/// Volcano Engine's progress message: a display position for the audience, with no NTP stamp and
/// no chorus rule behind it.
///
/// Reference: docs/progress-log.md's description (the `volcano` row of the payload table,
/// `{"progress": ms}`); no Volcano document or sample is named there.
struct VolcanoCodec: PayloadCodec {
    var wireProtocol: SyncProtocol { .volcano }
    var chorusRules: RuleSet? { nil }

    func decode(_ f: PayloadFields, notes: inout NoteCounter) throws(SyncError) -> SyncMessage {
        if f.has(.progress) { return .display(positionMs: try f.need(.progress, "the progress in ms")) }
        return f.ignored(&notes, "payload-ignored", key: "volcano", "a volcano payload without `progress` is ignored")
    }

    func encode(_ message: SyncMessage, ntp1900: Bool, into j: inout LineWriter) {
        j.raw("{")
        if case let .display(pos) = message { j.member("progress", pos) }
        j.raw("}")
    }
}
