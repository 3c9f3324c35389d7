import Foundation
import Testing
@testable import Courier

@Suite struct ZZDebugOrderTests {
    @Test func order() async throws {
        let delegate = EventDelegate()
        let session = URLSession(configuration: .ephemeral, delegate: delegate, delegateQueue: nil)
        defer { session.invalidateAndCancel() }
        let task = session.downloadTask(with: URL(string: "data:,order")!)
        task.resume()
        #expect(await delegate.waitForCompletion(of: task))
        print("DEBUG data:", delegate.events(for: task))
        let server = try await HTTPTest.nginx()
        let t2 = session.downloadTask(with: server.url(NginxServer.Files.hello))
        t2.resume()
        #expect(await delegate.waitForCompletion(of: t2))
        print("DEBUG http:", delegate.events(for: t2))
    }
}
