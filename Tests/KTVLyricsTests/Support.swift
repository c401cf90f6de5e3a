import Testing
@testable import KTVLyrics
import KTVCore
