import Foundation
import KTVBatch
import KTVCore
import KTVScore

/// `ktv batch --html-dir DIR`: each scored take's page as `DIR/<id>.html`, the recording linked
/// relative to it. Ids are made safe as file names: characters outside letters, digits, `.`, `-`
/// and `_` become `_`, and a name that had to change (or is long) ends in a hash of the id, so two
/// ids never share a page.
public struct TakePageWriter: TakeArtifactWriter {
    public var directory: String
    public var configuration: TakePageConfiguration

    public init(directory: String, configuration: TakePageConfiguration = TakePageConfiguration()) {
        self.directory = directory
        self.configuration = configuration
    }

    public func write(id: String, takePath: String, referencePath: String, result: Scorer.Result) throws -> String {
        let path = (directory as NSString).appendingPathComponent(Self.fileName(id: id))
        let page = try TakePage.renderBytes(result, take: takePath, reference: referencePath, title: id, audio: .of(take: takePath, page: path),
                                            configuration: configuration)
        try FileIO.writeAtomically(page, to: path)
        return path
    }

    /// The page's file name for `id`.
    public static func fileName(id: String) -> String {
        var safe = String(id.unicodeScalars.map { c -> Character in
            c.properties.isAlphabetic || ("0"..."9").contains(c) || c == "-" || c == "_" || c == "." ? Character(c) : "_"
        })
        if safe.hasPrefix(".") { safe = "_" + safe.dropFirst() }
        if safe != id || safe.isEmpty || safe.utf8.count > 100 {
            let hash = SHA256.digest(Array(id.utf8)).prefix(4).map { String(format: "%02x", $0) }.joined()
            safe = String(safe.prefix(60)) + "-" + hash
        }
        return safe + ".html"
    }
}
