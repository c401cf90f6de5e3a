public enum KTVAudioInfo {}
