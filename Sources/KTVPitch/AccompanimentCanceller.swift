import KTVAudio

enum AccompanimentCanceller {
    static func track(tracker: PitchTracker, take: String, channel: ChannelSelection, accompaniment: String) throws -> PitchTrack {
        throw PitchError.noAudio("--accompaniment is not implemented yet")
    }
}
