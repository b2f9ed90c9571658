import Testing
@testable import BooksyncCLI
@testable import BooksyncCore
@_spi(Remote) @testable import BooksyncKit

/// Inside a watch, a line never tells the user to run what the watch's next
/// round does by itself; outside one, it names the command.
@Suite struct LiveAdviceTests {
    @Test(arguments: [SyncEventKind.remoteChangedSincePull, .changedDuringSync])
    func aWatchLineNamesNoCommandToRun(kind: SyncEventKind) throws {
        let event = SyncEvent(id: try RecordID("dune"), kind: kind)
        let command = SyncCommandSupport.describe(event, path: "dune.json", would: "", command: .push).text.rendered
        let live = SyncCommandSupport.describe(event, path: "dune.json", would: "", command: .push, live: true).text.rendered
        #expect(command.contains("run "), "\(command)")
        #expect(!live.contains("run ") && !live.contains("'booksync "), "\(live)")
        #expect(live.contains("the next"), "\(live)")
    }
}
