import CZip
import KTVCore
import KTVLyrics

// Compressed MusicXML (`.mxl`): a zip archive holding the score and `META-INF/container.xml`.
// Source: MusicXML 4.0, "Compressed MusicXML files" (W3C Music Notation Community Group, 2021,
// https://www.w3.org/2021/06/musicxml40/tutorial/compressed-mxl-files/): the container's first
// `<rootfile full-path>` is the score; other rootfiles are alternative renditions. Read with libzip
// from memory; the one file in ktv that imports it.
//
// Bounded: the archive is read from bytes already capped by the caller, and the score entry is
// unpacked a block at a time up to `maxBytes`, so a zip bomb (a few KB that unpack to gigabytes)
// stops at the cap with an error instead of filling memory. libzip checks each entry's CRC at its
// end; encrypted entries are refused.

/// Opens `.mxl` archives and returns the MusicXML score they carry.
enum MXLContainer {
    /// A zip archive: a local file header, or the end-of-central-directory record of an empty one.
    static func looksLike(_ bytes: [UInt8]) -> Bool {
        bytes.starts(with: [0x50, 0x4B, 0x03, 0x04]) || bytes.starts(with: [0x50, 0x4B, 0x05, 0x06])
    }

    /// At most this many entries are looked through for a score when the container names none.
    static let maxEntriesSearched = 10_000

    /// The score in the archive: `(entry name, its bytes)`. `path` names the archive in errors.
    static func score(_ bytes: [UInt8], path: String, maxBytes: Int) throws(ScoreError) -> (name: String, bytes: [UInt8]) {
        func bad(_ detail: String) -> ScoreError { .badReference(path: path, line: nil, detail: detail) }
        // libzip is loaded on the first .mxl read (Sources/CZip/loader.c).
        var reason = [CChar](repeating: 0, count: 512)
        guard ktv_zip_load(&reason, reason.count) == 1 else {
            let why = String(decoding: reason.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            throw bad("reading compressed MusicXML needs libzip, which is not installed (\(why)); install it (Debian: libzip4), or give the score as uncompressed .musicxml")
        }
        let result: Result<(name: String, bytes: [UInt8]), ScoreError> = bytes.withUnsafeBytes { raw in
            guard let base = raw.baseAddress, raw.count > 0 else { return .failure(bad("the .mxl file is empty")) }
            var error = zip_error_t()
            zip_error_init(&error)
            defer { zip_error_fini(&error) }
            guard let source = zip_source_buffer_create(base, zip_uint64_t(raw.count), 0, &error) else {
                return .failure(bad("cannot read the zip archive: \(String(cString: zip_error_strerror(&error)))"))
            }
            guard let archive = zip_open_from_source(source, ZIP_RDONLY, &error) else {
                zip_source_free(source)
                return .failure(bad("not a readable zip archive (.mxl is compressed MusicXML): \(String(cString: zip_error_strerror(&error)))"))
            }
            defer { zip_discard(archive) }
            let entry: (index: zip_uint64_t, name: String)
            switch rootfile(archive, path: path, maxBytes: maxBytes) {
            case let .success(found): entry = found
            case let .failure(e): return .failure(e)
            }
            return read(archive, entry.index, name: entry.name, path: path, maxBytes: maxBytes).map { (entry.name, $0) }
        }
        return try result.get()
    }

    /// The score's entry: the container's first rootfile, else the first `.musicxml` or `.xml`
    /// entry outside `META-INF/` (some writers leave the container out).
    private static func rootfile(_ archive: OpaquePointer, path: String, maxBytes: Int) -> Result<(index: zip_uint64_t, name: String), ScoreError> {
        func bad(_ detail: String) -> ScoreError { .badReference(path: path, line: nil, detail: detail) }
        let containerName = "META-INF/container.xml"
        let containerIndex = zip_name_locate(archive, containerName, 0)
        if containerIndex >= 0 {
            let xml: [UInt8]
            switch read(archive, zip_uint64_t(containerIndex), name: containerName, path: path, maxBytes: maxBytes) {
            case let .success(b): xml = b
            case let .failure(e): return .failure(e)
            }
            let root: XMLElement
            do { root = try MiniXML.parse(xml) } catch {
                return .failure(bad("\(containerName) line \(error.line): \(error.message)"))
            }
            let files = root.child("rootfiles")?.children("rootfile") ?? []
            guard let fullPath = files.compactMap({ $0.attribute("full-path") }).first else {
                return .failure(bad("\(containerName) names no `<rootfile full-path=…>`; it must name the score inside the archive"))
            }
            let index = zip_name_locate(archive, fullPath, 0)
            guard index >= 0 else {
                return .failure(bad("\(containerName) names the score \(quoted(fullPath)), which is not in the archive"))
            }
            return .success((zip_uint64_t(index), fullPath))
        }
        let count = zip_get_num_entries(archive, 0)
        for i in 0..<zip_uint64_t(max(0, min(count, Int64(maxEntriesSearched)))) {
            guard let cName = zip_get_name(archive, i, 0) else { continue }
            let name = String(cString: cName)
            let lower = name.lowercased()
            if !lower.hasPrefix("meta-inf/"), lower.hasSuffix(".musicxml") || lower.hasSuffix(".xml") { return .success((i, name)) }
        }
        return .failure(bad("the archive has no \(containerName) and no .musicxml or .xml file; it is not compressed MusicXML"))
    }

    /// One entry unpacked, refused past `maxBytes`.
    private static func read(_ archive: OpaquePointer, _ index: zip_uint64_t, name: String, path: String, maxBytes: Int) -> Result<[UInt8], ScoreError> {
        func bad(_ detail: String) -> ScoreError { .badReference(path: path, line: nil, detail: detail) }
        var stat = zip_stat_t()
        zip_stat_init(&stat)
        if zip_stat_index(archive, index, 0, &stat) == 0, stat.valid & zip_uint64_t(ZIP_STAT_ENCRYPTION_METHOD) != 0,
           stat.encryption_method != UInt16(ZIP_EM_NONE) {
            return .failure(bad("\(quoted(name)) in the archive is encrypted; save the score without a password"))
        }
        guard let file = zip_fopen_index(archive, index, 0) else {
            return .failure(bad("cannot open \(quoted(name)) in the archive: \(String(cString: zip_strerror(archive)))"))
        }
        defer { zip_fclose(file) }
        var out: [UInt8] = []
        var block = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = block.withUnsafeMutableBytes { zip_fread(file, $0.baseAddress, zip_uint64_t($0.count)) }
            if n < 0 { return .failure(bad("\(quoted(name)) in the archive is damaged: \(String(cString: zip_file_strerror(file)))")) }
            if n == 0 { break }
            guard out.count + Int(n) <= maxBytes else {
                return .failure(bad("\(quoted(name)) unpacks to more than \(maxBytes / 1_048_576) MiB (a zip bomb, or a score larger than a song needs); nothing past that is read"))
            }
            out.append(contentsOf: block[0..<Int(n)])
        }
        return .success(out)
    }
}
