import Foundation
import Testing
@testable import Courier
import CMallocInfo

/// Found by the AddressSanitizer pass: an upload cancelled mid-transfer dropped its SFTP file handle
/// with its channel, and libssh2 frees a handle, with the WRITE requests it still has in flight (up
/// to 2 MiB), only when the handle is closed. Cancelled uploads must leave the heap where it was.
extension SFTPTests {
    @Suite("SFTP cancelled transfers free libssh2's handles")
    struct CancelledTransferMemoryTests {
        @Test func cancelledUploadsLeaveNothingInLibssh2() async throws {
            let server = try await SFTPTest.server()
            let body = try SFTPTest.randomBytes(16 << 20)
            let delegate = EventDelegate()
            let session = SFTPTest.session(server, delegate: delegate)
            defer { session.finishTasksAndInvalidate() }
            var request = URLRequest(url: server.url(SFTPTest.uploadName("warm-up"), password: true))
            request.httpMethod = "PUT"
            // The connection is made (and kept) before the heap is measured.
            let warmUp = session.uploadTask(with: request, from: Data("warm".utf8))
            try await SFTPTest.run(warmUp, delegate)
            #expect(delegate.error(of: warmUp) == nil)

            let baseline = mallinfo2().uordblks
            for _ in 0..<4 {
                request.url = server.url(SFTPTest.uploadName("cancelled"), password: true)
                let task = session.uploadTask(with: request, from: body)
                task.resume()
                let sending = await waitUntil(timeout: 20) {
                    delegate.events(for: task).contains { event in
                        if case .sentBody(_, let total, _) = event { return total >= 2 << 20 }
                        return false
                    }
                }
                #expect(sending)
                task.cancel()
                #expect(await delegate.waitForCompletion(of: task, timeout: 20))
                #expect(try SFTPTest.urlError(delegate.error(of: task)).code == .cancelled)
            }
            // The channels close their handles as they shut down, after the tasks complete.
            await settle(1)
            let growth = Int(mallinfo2().uordblks) - Int(baseline)
            #expect(growth < 2 << 20, "the heap grew by \(growth >> 10) KiB over four cancelled uploads")
            #expect(body.count == 16 << 20)
        }
    }
}
