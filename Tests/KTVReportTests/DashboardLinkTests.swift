import Foundation
import KTVBatch
import KTVCore
@testable import KTVReport
import Testing

/// Which `page` values of a results file the batch dashboard links to (issue 31).
@Suite struct BatchDashboardPageLinkTests {
    func results(_ pages: [(id: String, page: String)]) throws -> BatchResults {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("ktv-links-\(UUID().uuidString).jsonl").path
        defer { unlink(path) }
        let text = pages.map { "{\"id\":\"\($0.id)\",\"status\":\"ok\",\"result\":{\"rules\":\"ktv\",\"score\":1,\"score_100\":50,\"page\":\"\($0.page)\"}}\n" }.joined()
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return try BatchResults.read(path: path)
    }

    /// A results line's `page` made a dashboard link to `../../../etc/passwd`.
    @Test func onlyEachTakesOwnPageInThePagesFolderIsLinked() throws {
        let r = try results([("evil", "../../../etc/passwd"), ("t0", "out/pages/t0.html"), ("passwd", "out/pages/../../../../etc/passwd.html"),
                             ("t1", "out/pages/t1.html"), ("a b", "out/pages/\(TakePageWriter.fileName(id: "a b"))")])
        let (pages, dropped) = BatchDashboard.pageLinks(r)
        #expect(pages == ["t0": "out/pages/t0.html", "t1": "out/pages/t1.html", "a b": "out/pages/\(TakePageWriter.fileName(id: "a b"))"])
        #expect(dropped.count == 2 && dropped[0].contains("`evil`") && dropped[1].contains("`passwd`"), "\(dropped)")
        let html = BatchDashboard.render(r, outputPath: "out/dash.html")
        #expect(!html.contains("etc/passwd\"") && !html.contains("passwd.html\"") && html.contains("\"pages/t0.html\""))
    }

    /// One page each in two folders: the one that does not climb out with `..` is the pages folder.
    @Test func onATieTheFolderThatDoesNotClimbWins() throws {
        let r = try results([("x", "../../etc/x.html"), ("t0", "pages/t0.html")])
        #expect(BatchDashboard.pageLinks(r).pages == ["t0": "pages/t0.html"])
        #expect(BatchDashboard.lexicalFolder("a/./b/../c/p.html") == "a/c" && BatchDashboard.lexicalFolder("/../x/p.html") == "/x")
        #expect(BatchDashboard.lexicalFolder("../../p.html") == "../..")
    }
}
