import Foundation
import Testing
@testable import Courier

/// Sends an authentication challenge with itself as the sender, then answers with a body naming
/// the sender method the session called: `use:<user>:<password>`, `without`, `default`, `reject`;
/// `cancel` fails the load with `URLError.cancelled`.
private final class ChallengingProtocol: URLProtocol, URLAuthenticationChallengeSender, @unchecked Sendable {
    static let scheme = "courier-challenge"
    static let answers = Locked<[String: [String]]>([:])

    static func url() -> URL { URL(string: "\(scheme)://\(UUID().uuidString.lowercased())/secret")! }

    static let space = URLProtectionSpace(host: "courier.test", port: 443, protocol: NSURLProtectionSpaceHTTPS,
                                          realm: "tests", authenticationMethod: NSURLAuthenticationMethodHTTPBasic)

    override class func canInit(with request: URLRequest) -> Bool { request.url?.scheme == scheme }
    override class func canonicalRequest(for request: URLRequest) -> URLRequest { request }

    override func startLoading() {
        let challenge = URLAuthenticationChallenge(protectionSpace: Self.space,
                                                   proposedCredential: URLCredential(user: "proposed", password: "p", persistence: .none),
                                                   previousFailureCount: 0, failureResponse: nil, error: nil, sender: self)
        client?.urlProtocol(self, didReceive: challenge)
    }

    override func stopLoading() {}

    private func answer(_ text: String) {
        let key = request.url?.absoluteString ?? ""
        Self.answers.withLock { $0[key, default: []].append(text) }
        guard let url = request.url else { return }
        if text == "cancel" {
            client?.urlProtocol(self, didFailWithError: URLError(.cancelled, userInfo: [NSURLErrorFailingURLErrorKey: url]))
            return
        }
        let body = Data(text.utf8)
        let response = HTTPURLResponse(url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: ["Content-Length": "\(body.count)"])!
        client?.urlProtocol(self, didReceive: response, cacheStoragePolicy: .notAllowed)
        client?.urlProtocol(self, didLoad: body)
        client?.urlProtocolDidFinishLoading(self)
    }

    func use(_ credential: URLCredential, for challenge: URLAuthenticationChallenge) {
        answer("use:\(credential.user ?? ""):\(credential.password ?? "")")
    }
    func continueWithoutCredential(for challenge: URLAuthenticationChallenge) { answer("without") }
    func cancel(_ challenge: URLAuthenticationChallenge) { answer("cancel") }
    func performDefaultHandling(for challenge: URLAuthenticationChallenge) { answer("default") }
    func rejectProtectionSpaceAndContinue(with challenge: URLAuthenticationChallenge) { answer("reject") }
}

/// The four dispositions, as test arguments.
enum ChallengeAnswer: String, Sendable, CaseIterable {
    case useCredential, performDefaultHandling, cancelAuthenticationChallenge, rejectProtectionSpace

    var disposition: URLSession.AuthChallengeDisposition {
        switch self {
        case .useCredential: return .useCredential
        case .performDefaultHandling: return .performDefaultHandling
        case .cancelAuthenticationChallenge: return .cancelAuthenticationChallenge
        case .rejectProtectionSpace: return .rejectProtectionSpace
        }
    }

    /// What the protocol's sender records.
    var senderCall: String {
        switch self {
        case .useCredential: return "use:alice:secret"
        case .performDefaultHandling: return "default"
        case .cancelAuthenticationChallenge: return "cancel"
        case .rejectProtectionSpace: return "reject"
        }
    }
}

@Suite("Authentication challenges from a custom protocol")
struct ChallengeTests {

    private func session(delegate: (any URLSessionDelegate)?) -> URLSession {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.protocolClasses = [ChallengingProtocol.self]
        return URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
    }

    @Test("the task delegate's answer reaches the challenge's sender", arguments: ChallengeAnswer.allCases)
    func dispositions(_ answer: ChallengeAnswer) async throws {
        let received = Locked<URLAuthenticationChallenge?>(nil)
        var hooks = EventDelegate.Hooks()
        hooks.challenge = { _, challenge, completion in
            received.withLock { $0 = challenge }
            let credential = answer == .useCredential ? URLCredential(user: "alice", password: "secret", persistence: .forSession) : nil
            completion(answer.disposition, credential)
        }
        let delegate = EventDelegate(hooks)
        let session = session(delegate: delegate)
        defer { session.invalidateAndCancel() }
        let url = ChallengingProtocol.url()
        let task = session.dataTask(with: url)
        task.resume()

        #expect(await delegate.waitForCompletion(of: task))
        #expect(ChallengingProtocol.answers.current[url.absoluteString] == [answer.senderCall])
        let challenge = try #require(received.current)
        #expect(challenge.protectionSpace == ChallengingProtocol.space)
        #expect(challenge.proposedCredential?.user == "proposed")
        #expect(challenge.previousFailureCount == 0)
        #expect(delegate.collapsedNames(for: task).first == "challenge")
        if answer == .cancelAuthenticationChallenge {
            #expect((delegate.error(of: task) as? URLError)?.code == .cancelled)
            #expect(!delegate.collapsedNames(for: task).contains("response"))
        } else {
            #expect(delegate.error(of: task) == nil)
            #expect(String(decoding: delegate.body(of: task), as: UTF8.self) == answer.senderCall)
            #expect(delegate.collapsedNames(for: task) == ["challenge", "response", "data", "metrics", "complete"])
        }
    }

    @Test("useCredential without a credential continues without one")
    func useWithoutCredential() async throws {
        var hooks = EventDelegate.Hooks()
        hooks.challenge = { _, _, completion in completion(.useCredential, nil) }
        let delegate = EventDelegate(hooks)
        let session = session(delegate: delegate)
        defer { session.invalidateAndCancel() }
        let url = ChallengingProtocol.url()
        let task = session.dataTask(with: url)
        task.resume()
        #expect(await delegate.waitForCompletion(of: task))
        #expect(ChallengingProtocol.answers.current[url.absoluteString] == ["without"])
    }

    @Test("without a delegate the challenge gets default handling")
    func noDelegate() async throws {
        let session = session(delegate: nil)
        defer { session.invalidateAndCancel() }
        let url = ChallengingProtocol.url()
        let result = try await session.loadData(url)
        #expect(result.error == nil)
        #expect(result.data == Data("default".utf8))
        #expect(ChallengingProtocol.answers.current[url.absoluteString] == ["default"])
    }

    @Test("a task with a completion handler still asks the delegate about challenges")
    func completionHandlerTaskAsksDelegate() async throws {
        var hooks = EventDelegate.Hooks()
        hooks.challenge = { _, _, completion in completion(.useCredential, URLCredential(user: "bob", password: "pw", persistence: .none)) }
        let delegate = EventDelegate(hooks)
        let session = session(delegate: delegate)
        defer { session.invalidateAndCancel() }
        let url = ChallengingProtocol.url()
        let result = try await session.loadData(url)
        #expect(result.data == Data("use:bob:pw".utf8))
        #expect(delegate.events.contains { $0.name == "challenge" })
    }

    @Test("an answer given later, from another thread, still reaches the sender")
    func lateAnswer() async throws {
        var hooks = EventDelegate.Hooks()
        hooks.challenge = { _, _, completion in
            DispatchQueue.global().asyncAfter(deadline: .now() + 0.1) { completion(.rejectProtectionSpace, nil) }
        }
        let delegate = EventDelegate(hooks)
        let session = session(delegate: delegate)
        defer { session.invalidateAndCancel() }
        let url = ChallengingProtocol.url()
        let task = session.dataTask(with: url)
        task.resume()
        #expect(await delegate.waitForCompletion(of: task))
        #expect(String(decoding: delegate.body(of: task), as: UTF8.self) == "reject")
    }
}
