import Foundation
import Testing
@testable import Courier

/// Logins: a refused login raises a challenge (protocol "ftp"), the delegate's credential is used
/// and stored by its persistence; stored credentials are used without asking; no delegate ends in
/// `userAuthenticationRequired`.
@Suite("FTP logins", .serialized)
struct FTPLoginTests {
    @Test func refusedLoginWithoutDelegateFails() async throws {
        let server = try await FTPTest.servers()
        let session = FTPTest.session()
        defer { session.finishTasksAndInvalidate() }
        let url = server.url("/hello.txt", user: FTPTestServer.user, password: "wrong")
        let result = try await session.loadData(url, timeout: 30)
        let error = try FTPTest.urlError(result.error)
        #expect(error.code == .userAuthenticationRequired)
        #expect(error.failingURL == url)
    }

    @Test func challengeAnsweredWithACredential() async throws {
        let server = try await FTPTest.servers()
        let seen = Locked<[URLAuthenticationChallenge]>([])
        let good = URLCredential(user: FTPTestServer.user, password: FTPTestServer.password, persistence: .forSession)
        let delegate = EventDelegate(EventDelegate.Hooks(challenge: { _, challenge, completion in
            seen.withLock { $0.append(challenge) }
            completion(.useCredential, good)
        }))
        let session = FTPTest.session(delegate: delegate)
        defer { session.finishTasksAndInvalidate() }
        let task = session.dataTask(with: server.url("/hello.txt", user: FTPTestServer.user, password: "wrong"))
        task.resume()
        #expect(await delegate.waitForCompletion(of: task, timeout: 30))
        #expect(delegate.error(of: task) == nil)
        #expect(delegate.body(of: task) == Data("Hello, Courier!\n".utf8))
        let challenge = try #require(seen.current.first)
        #expect(seen.current.count == 1)
        #expect(challenge.protectionSpace.protocol == "ftp")
        #expect(challenge.protectionSpace.host == "127.0.0.1")
        #expect(challenge.protectionSpace.port == server.port(.standard))
        #expect(challenge.protectionSpace.authenticationMethod == NSURLAuthenticationMethodDefault)
        #expect(challenge.previousFailureCount == 0)
        #expect(challenge.proposedCredential?.user == FTPTestServer.user)
        #expect(challenge.error != nil)
        // The working credential was kept for the session: the next login needs no challenge.
        let space = challenge.protectionSpace
        #expect(session.configuration.urlCredentialStorage?.credentials(for: space)?[FTPTestServer.user]?.password == FTPTestServer.password)
    }

    @Test func wrongAnswersCountFailures() async throws {
        let server = try await FTPTest.servers()
        let counts = Locked<[Int]>([])
        let delegate = EventDelegate(EventDelegate.Hooks(challenge: { _, challenge, completion in
            counts.withLock { $0.append(challenge.previousFailureCount) }
            if challenge.previousFailureCount < 2 {
                completion(.useCredential, URLCredential(user: FTPTestServer.user, password: "still wrong", persistence: .none))
            } else {
                completion(.cancelAuthenticationChallenge, nil)
            }
        }))
        let session = FTPTest.session(delegate: delegate)
        defer { session.finishTasksAndInvalidate() }
        let task = session.dataTask(with: server.url("/hello.txt", user: FTPTestServer.user, password: "wrong"))
        task.resume()
        #expect(await delegate.waitForCompletion(of: task, timeout: 60))
        #expect(counts.current == [0, 1, 2])
        #expect(try FTPTest.urlError(delegate.error(of: task)).code == .cancelled)
    }

    @Test func storedDefaultCredentialIsUsed() async throws {
        let server = try await FTPTest.servers()
        let storage = URLCredentialStorage()
        let space = URLProtectionSpace(host: "127.0.0.1", port: server.port(.standard), protocol: "ftp", realm: nil,
                                       authenticationMethod: NSURLAuthenticationMethodDefault)
        storage.setDefaultCredential(URLCredential(user: FTPTestServer.user, password: FTPTestServer.password, persistence: .forSession),
                                     for: space)
        let session = FTPTest.session { $0.urlCredentialStorage = storage }
        defer { session.finishTasksAndInvalidate() }
        let name = "stored-\(UUID().uuidString).txt"
        // Anonymous login cannot write: the upload works only with the stored credential.
        _ = try await withTimeout(20) {
            try await session.upload(for: URLRequest(url: server.url("/upload/\(name)")), from: Data("stored\n".utf8))
        }
        #expect(try Data(contentsOf: server.root.appendingPathComponent("upload/\(name)")) == Data("stored\n".utf8))
    }

    @Test func streamedUploadIsAskedForAgainAfterTheLoginChallenge() async throws {
        let server = try await FTPTest.servers()
        let body = Data(repeating: 0x33, count: 200_000)
        let delegate = EventDelegate(EventDelegate.Hooks(
            challenge: { _, _, completion in
                completion(.useCredential, URLCredential(user: FTPTestServer.user, password: FTPTestServer.password, persistence: .none))
            },
            bodyStream: { _ in InputStream(data: body) }))
        let session = FTPTest.session(delegate: delegate)
        defer { session.finishTasksAndInvalidate() }
        let name = "restream-\(UUID().uuidString).bin"
        let task = session.uploadTask(withStreamedRequest: URLRequest(url: server.url("/upload/\(name)", user: FTPTestServer.user, password: "wrong")))
        task.resume()
        #expect(await delegate.waitForCompletion(of: task, timeout: 30))
        #expect(delegate.error(of: task) == nil)
        #expect(delegate.events(for: task).filter { $0.name == "needStream" }.count == 2)
        #expect(try Data(contentsOf: server.root.appendingPathComponent("upload/\(name)")) == body)
    }
}
