import KTVCore

/// The dimensions measured on the voice (vibrato, voice quality, dynamics) of a take on the song's
/// clock, against the reference singer's recording when there is one: where each measure's inputs
/// come from. The measures themselves are `VibratoMeasure`, `VoiceQualityMeasure`, `DynamicsMeasure`.
enum VoiceDimensions {
    static func measure(_ take: SungTake, reference: ReferenceMelody) -> [DimensionScore] {
        let recording = reference.recording
        // The take's contour in the order sung, on the recording's clock (a warp does not bend a rate).
        let takeTimes = take.recordingTimesS.flatMap { $0.count == take.contour.count ? $0 : nil } ?? take.contour.timesS
        let takeCents = take.contour.f0Hz.map { $0.map { ReferenceMelody.cents(hz: $0) } }
        let takeVibrato = VibratoMeasure.figures(timesS: takeTimes, cents: takeCents)
        let vibrato = VibratoMeasure.dimension(take: takeVibrato, reference: recording?.vibrato, referenceIsRecording: recording != nil)

        var takeQuality: VoiceQualityFigures?
        if let voice = take.voice {
            let frames = take.contour.f0Hz.indices.compactMap { i in take.contour.f0Hz[i] == nil ? nil : voice.index(atS: takeTimes[i]) }
            takeQuality = VoiceQualityMeasure.figures(voice: voice, frames: frames)
        }
        let referenceQuality = recording?.quality
        let quality = VoiceQualityMeasure.dimension(take: takeQuality, reference: referenceQuality, referenceIsRecording: recording != nil,
                                                    takeHasVoice: take.voice != nil)
        let below = referenceQuality.flatMap { r in takeQuality.map { r.brightnessDb - $0.brightnessDb } }
        return [vibrato, quality, DynamicsMeasure.dimension(take, reference: reference, brightnessBelowDb: below)]
    }
}
