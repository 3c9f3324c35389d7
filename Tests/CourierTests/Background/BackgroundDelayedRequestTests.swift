import Foundation
import Testing
@testable import Courier

/// The agent asks a connected app's delegate `willBeginDelayedRequest` when a task with an
/// `earliestBeginDate` becomes due, and does what it answers.
@Suite("Background delayed requests", .serialized)
struct BackgroundDelayedRequestTests {
    /// Runs a download of nginx's hello file that may begin in a second, in a background session
    /// whose delegate answers the delayed request with `answer`; returns the delegate and the task
    /// once it completed.
    private func download(_ identifier: String, agentSettings: [String: String] = [:],
                          answer: @escaping @Sendable (URLRequest) -> (URLSession.DelayedRequestDisposition, URLRequest?)?) async throws
        -> (AnsweringDelegate, URLSessionTask) {
        let nginx = try await NginxServer.shared()
        let sandbox = try BackgroundSandbox(agentSettings: agentSettings)
        defer { sandbox.remove() }
        let delegate = AnsweringDelegate()
        delegate.delayed = answer
        let session = URLSession(configuration: sandbox.configuration(identifier), delegate: delegate, delegateQueue: nil)
        defer { session.invalidateAndCancel() }
        let task = session.downloadTask(with: nginx.url(NginxServer.Files.hello))
        task.earliestBeginDate = Date().addingTimeInterval(1)
        task.resume()
        await waitUntil { delegate.recorder.state.current.completions[task.taskIdentifier] != nil }
        return (delegate, task)
    }

    @Test("`.continueLoading`: the delayed download runs with its own request")
    func continueLoading() async throws {
        let nginx = try await NginxServer.shared()
        let (delegate, task) = try await download("continue") { _ in (.continueLoading, nil) }
        #expect(delegate.asked.current == ["delayed \(nginx.url(NginxServer.Files.hello).absoluteString)"]
                && delegate.recorder.state.current.files[task.taskIdentifier]?.hash == StreamHash.of(NginxServer.Files.helloContents))
    }

    @Test("`.useNewRequest`: the agent downloads the delegate's request instead")
    func useNewRequest() async throws {
        let nginx = try await NginxServer.shared()
        let (delegate, task) = try await download("newrequest") { _ in (.useNewRequest, URLRequest(url: nginx.url(NginxServer.Files.json))) }
        #expect(delegate.recorder.state.current.files[task.taskIdentifier]?.hash == StreamHash.of(NginxServer.Files.jsonContents))
    }

    @Test("`.useNewRequest` with a request that has no scheme: the task fails with `badURL`")
    func useNewRequestWithoutScheme() async throws {
        let (delegate, task) = try await download("badrequest") { _ in
            (.useNewRequest, URLRequest(url: URL(string: "no-scheme/at-all")!))
        }
        let error = delegate.recorder.state.current.completions[task.taskIdentifier] ?? nil
        #expect(error?.code == .badURL)
    }

    @Test("`.cancel`: the delayed task ends `cancelled` without a download")
    func cancelDelayedRequest() async throws {
        let (delegate, task) = try await download("canceldelayed") { _ in (.cancel, nil) }
        let state = delegate.recorder.state.current
        #expect((state.completions[task.taskIdentifier] ?? nil)?.code == .cancelled && state.files[task.taskIdentifier] == nil)
    }

    @Test("No answer within the agent's question timeout: the delayed download runs with its own request")
    func noAnswerContinuesLoading() async throws {
        let nginx = try await NginxServer.shared()
        let (delegate, task) = try await download("unanswered", agentSettings: ["COURIER_AGENT_QUESTION_TIMEOUT": "1"]) { _ in nil }
        let state = delegate.recorder.state.current
        #expect(delegate.asked.current == ["delayed \(nginx.url(NginxServer.Files.hello).absoluteString)"])
        #expect((state.completions[task.taskIdentifier] ?? nil) == nil)
        #expect(state.files[task.taskIdentifier]?.hash == StreamHash.of(NginxServer.Files.helloContents))
    }
}
