import Foundation
@testable import KTVBatch
import Testing

/// The line reader of pipes and results files, with a line of megabytes (a long song's score card
/// from a worker) among short ones.
@Suite struct LineReaderTests {
    @Test func aLongLineIsReadWholeAndTheLinesAroundIt() throws {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        let long = [UInt8](repeating: 0x61, count: 3 << 20)
        let text: [UInt8] = Array("first\n".utf8) + long + Array("\nafter\nlast\n".utf8) + long + Array("\n".utf8)
        let (readEnd, writeEnd) = (fds[0], fds[1])
        let writer = Thread {
            var k = 0
            while k < text.count {
                let n = text[k...].withUnsafeBytes { write(writeEnd, $0.baseAddress, min($0.count, 100_000)) }
                if n <= 0 { break }
                k += n
            }
            close(writeEnd)
        }
        writer.start()
        var reader = FDLineReader(fd: readEnd)
        var lines: [[UInt8]] = []
        while let line = reader.next() { lines.append(line) }
        close(readEnd)
        #expect(lines.count == 5)
        #expect(lines.map(\.count) == [5, long.count, 5, 4, long.count])
        #expect(lines[0] == Array("first".utf8) && lines[2] == Array("after".utf8) && lines[3] == Array("last".utf8))
        #expect(lines[1] == long && lines[4] == long && reader.unterminatedBytes == 0)
    }
}
