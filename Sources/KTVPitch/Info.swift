public enum KTVPitchInfo {}
