/// NTP time stamps in the two epochs chorus logs use.
///
/// Agora's `getNtpTimeInMs()` adds 2,208,988,800 s to the Unix time (the NTP era starts on
/// 1900-01-01), so its `setLrcTime.ntp` values are about 3.9e12 while ZEGO and Tencent stamps are
/// Unix milliseconds (about 1.7e12). A log may mix both; every stamp is brought to Unix ms on reading.
public enum NTPTime {
    /// Milliseconds from 1900-01-01 to 1970-01-01.
    public static let epoch1900OffsetMs = 2_208_988_800_000

    /// Stamps at or above this are read as NTP-1900: it is 2000-01-01 in the 1900 epoch, and as a
    /// Unix time it would be the year 2070, which no log of this era carries.
    public static let epoch1900ThresholdMs = epoch1900OffsetMs + 946_684_800_000

    /// A stamp in Unix milliseconds, whichever epoch it was written in.
    @inline(__always)
    public static func unixMs(_ stamp: Int) -> Int {
        stamp >= epoch1900ThresholdMs ? stamp - epoch1900OffsetMs : stamp
    }

    public static func is1900(_ stamp: Int) -> Bool { stamp >= epoch1900ThresholdMs }
}
