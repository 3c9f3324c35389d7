import Foundation
import Testing
@testable import Courier

/// The agent asks a connected app's data delegate about an upload task's response
/// (`urlSession(_:dataTask:didReceive:completionHandler:)`), as Apple does for upload tasks (data
/// tasks) in a background session. The uploads go to nginx's `/echo`.
@Suite("Background upload response dispositions", .serialized)
struct BackgroundUploadResponseTests {
    /// Uploads a small file to nginx's `/echo` in a background session whose delegate answers the
    /// response with `disposition`; returns the delegate and the task once it completed.
    private func upload(answering disposition: URLSession.ResponseDisposition, _ identifier: String) async throws
        -> (AnsweringDelegate, URLSessionTask) {
        let nginx = try await NginxServer.shared()
        let sandbox = try BackgroundSandbox()
        defer { sandbox.remove() }
        let body = sandbox.root.appendingPathComponent("body.txt")
        try Data("background upload body\n".utf8).write(to: body)
        let delegate = AnsweringDelegate()
        delegate.response = { _ in disposition }
        let session = URLSession(configuration: sandbox.configuration(identifier), delegate: delegate, delegateQueue: nil)
        defer { session.invalidateAndCancel() }
        var request = URLRequest(url: nginx.url("/echo"))
        request.httpMethod = "POST"
        let task = session.uploadTask(with: request, fromFile: body)
        task.resume()
        await waitUntil { delegate.recorder.state.current.completions[task.taskIdentifier] != nil }
        return (delegate, task)
    }

    @Test("`.allow` from the connected app: the upload finishes and its response body arrives")
    func allowGoesOn() async throws {
        let (delegate, task) = try await upload(answering: .allow, "allow")
        let echoed = try HTTPTest.echoed(delegate.bodies.current[task.taskIdentifier])
        #expect(delegate.asked.current == ["response 200"]
                && delegate.recorder.state.current.completions[task.taskIdentifier] == .some(nil)
                && echoed.body == Data("background upload body\n".utf8))
    }

    @Test("`.cancel` from the connected app: the upload ends `cancelled`")
    func cancelCancels() async throws {
        let (delegate, task) = try await upload(answering: .cancel, "cancel")
        let error = delegate.recorder.state.current.completions[task.taskIdentifier] ?? nil
        #expect(delegate.asked.current == ["response 200"] && error?.code == .cancelled)
    }

    @Test("`.becomeDownload` cannot apply to a background upload: the upload ends `cancelled`")
    func becomeDownloadCancels() async throws {
        let (delegate, task) = try await upload(answering: .becomeDownload, "becomedownload")
        let error = delegate.recorder.state.current.completions[task.taskIdentifier] ?? nil
        #expect(delegate.asked.current == ["response 200"] && error?.code == .cancelled)
    }
}
