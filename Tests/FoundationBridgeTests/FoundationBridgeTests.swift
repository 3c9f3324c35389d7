@testable import CourierFoundationBridge
import Foundation
import FoundationNetworking
import Testing

/// FoundationNetworking's own `URLSession` — `URLSession.shared` and sessions with delegates, as
/// unmodified code uses them — loading sftp, file and plugin URLs through the bridge, against a
/// real sshd and a real plugin. The bridge is process-wide, so the tests run one at a time.
@Suite(.serialized)
struct FoundationBridgeTests {
    let server: BridgeSSHServer

    init() throws {
        server = try BridgeTestSetup.install()
    }

    // MARK: What it serves

    @Test func sftpDownloadThroughSharedSession() async throws {
        let url = server.url("hello.txt")
        let (data, _) = try await bounded { try await URLSession.shared.data(from: url) }
        #expect(data == BridgeSSHServer.hello)
    }

    @Test func sftpResponseNamesTheFileAndItsLength() async throws {
        let url = server.url("hello.txt")
        let (_, response) = try await bounded { try await URLSession.shared.data(from: url) }
        #expect(response.url == url && response.expectedContentLength == Int64(BridgeSSHServer.hello.count))
    }

    @Test func fileDownloadThroughSharedSession() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("courier-bridge-\(UUID().uuidString).txt")
        let contents = Data("a file: URL, which FoundationNetworking refuses on its own\n".utf8)
        try contents.write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let (data, _) = try await bounded { try await URLSession.shared.data(from: file) }
        #expect(data == contents)
    }

    @Test func pluginDownloadThroughSharedSession() async throws {
        let (data, _) = try await bounded { try await URLSession.shared.data(from: BridgeFixturePlugin.url("/hello")) }
        #expect(data == BridgeFixturePlugin.hello)
    }

    @Test func pluginRedirectIsFollowedByCourier() async throws {
        let (_, response) = try await bounded { try await URLSession.shared.data(from: BridgeFixturePlugin.url("/redirect")) }
        #expect(response.url == BridgeFixturePlugin.url("/hello"))
    }

    @Test func pluginHTTPRedirectIsPutToTheFoundationDelegate() async throws {
        let delegate = RecordingDataDelegate()
        let session = URLSession(configuration: .ephemeral, delegate: delegate, delegateQueue: nil)
        defer { session.finishTasksAndInvalidate() }
        session.dataTask(with: BridgeFixturePlugin.url("/http-redirect")).resume()
        _ = await delegate.waitForCompletion()
        #expect(delegate.redirects.withLock { $0 } == [BridgeFixturePlugin.url("/hello")])
    }

    @Test func sftpUploadOfTheRequestBody() async throws {
        let name = "upload-\(UUID().uuidString).txt"
        var request = URLRequest(url: server.url("uploads/\(name)"))
        request.httpMethod = "PUT"
        request.httpBody = Data("uploaded by FoundationNetworking through Courier\n".utf8)
        _ = try await runDataTask(request)
        #expect((try? server.contents(of: "uploads/\(name)")) == request.httpBody)
    }

    @Test func servesCourierSchemesAndLeavesFoundationItsOwn() {
        let served = CourierFoundationBridge.servedSchemes
        #expect(served.isSuperset(of: ["sftp", "file", BridgeFixturePlugin.scheme])
                && served.isDisjoint(with: ["http", "https", "ftp", "data", "ftps"]))
    }

    // MARK: The body

    @Test func delegateReceivesTheBodyInChunksAsTheyArrive() async throws {
        let delegate = RecordingDataDelegate()
        let session = URLSession(configuration: .ephemeral, delegate: delegate, delegateQueue: nil)
        defer { session.finishTasksAndInvalidate() }
        session.dataTask(with: server.url("big.bin")).resume()
        _ = await delegate.waitForCompletion()
        let expected = try server.contents(of: "big.bin")
        #expect(delegate.chunks.count > 1 && Data(delegate.chunks.joined()) == expected && delegate.error == nil)
    }

    @Test func completionHandlerGetsTheWholeBodyOfManyChunks() async throws {
        let outcome = try await runDataTask(URLRequest(url: server.url("big.bin")))
        #expect(outcome.data == (try server.contents(of: "big.bin")))
    }

    @Test func suspendAndResumeLoseNothing() async throws {
        let outcome = try await runDataTask(URLRequest(url: server.url("big.bin"))) { task in
            task.suspend()
            try? await Task.sleep(for: .milliseconds(200))
            task.resume()
        }
        #expect(outcome.data == (try server.contents(of: "big.bin")))
    }

    // MARK: Cancellation and errors

    @Test func cancelReportsCancelled() async throws {
        let outcome = try await runDataTask(URLRequest(url: BridgeFixturePlugin.url("/hang"))) { task in
            _ = await BridgeTestSetup.waitForCourierTasks(1)
            task.cancel()
        }
        #expect(outcome.error?.code == .cancelled)
    }

    @Test func cancelStopsTheCourierTask() async throws {
        _ = try await runDataTask(URLRequest(url: BridgeFixturePlugin.url("/hang"))) { task in
            _ = await BridgeTestSetup.waitForCourierTasks(1)
            task.cancel()
        }
        #expect(await BridgeTestSetup.waitForCourierTasks(0))
    }

    @Test func missingSFTPFileFailsWithCourierError() async throws {
        let url = server.url("missing.txt")
        let outcome = try await runDataTask(URLRequest(url: url))
        #expect(outcome.error?.code == .fileDoesNotExist && outcome.error?.failingURL == url)
    }

    @Test func downloadTasksAreRefusedWithUnsupportedURL() async throws {
        let url = server.url("hello.txt")
        let error = try await bounded { () -> URLError? in
            await withCheckedContinuation { continuation in
                URLSession.shared.downloadTask(with: url) { _, _, error in
                    continuation.resume(returning: error as? URLError)
                }.resume()
            }
        }
        #expect(error?.code == .unsupportedURL)
    }

    // MARK: Challenges

    @Test func hostKeyChallengeIsAnsweredByTheFoundationDelegate() async throws {
        try BridgeTestSetup.install(knowsHostKey: false)
        defer { _ = try? BridgeTestSetup.install() }
        let delegate = RecordingDataDelegate(acceptsHostKey: true)
        let session = URLSession(configuration: .ephemeral, delegate: delegate, delegateQueue: nil)
        defer { session.finishTasksAndInvalidate() }
        session.dataTask(with: server.url("hello.txt")).resume()
        _ = await delegate.waitForCompletion()
        #expect(Data(delegate.chunks.joined()) == BridgeSSHServer.hello
                && delegate.challengeRealms.withLock { $0 } == ["ssh-ed25519 \(server.hostKeyFingerprint)"])
    }

    @Test func hostKeyChallengeCancelledByTheFoundationDelegateCancels() async throws {
        try BridgeTestSetup.install(knowsHostKey: false)
        defer { _ = try? BridgeTestSetup.install() }
        let delegate = RecordingDataDelegate(acceptsHostKey: false)
        let session = URLSession(configuration: .ephemeral, delegate: delegate, delegateQueue: nil)
        defer { session.finishTasksAndInvalidate() }
        session.dataTask(with: server.url("hello.txt")).resume()
        _ = await delegate.waitForCompletion()
        #expect((delegate.error as? URLError)?.code == .cancelled)
    }

    @Test func unknownHostKeyWithoutDelegateIsRefused() async throws {
        try BridgeTestSetup.install(knowsHostKey: false)
        defer { _ = try? BridgeTestSetup.install() }
        let outcome = try await runDataTask(URLRequest(url: server.url("hello.txt")))
        #expect(outcome.error?.code == .serverCertificateUntrusted)
    }

    // MARK: Installing

    @Test func ftpsIsServedOnlyWhenAskedFor() async throws {
        try BridgeTestSetup.install(servesFTPS: true)
        defer { _ = try? BridgeTestSetup.install() }
        let closedPort = try TestProcess.freePort()
        let outcome = try await runDataTask(URLRequest(url: URL(string: "ftps://127.0.0.1:\(closedPort)/file")!))
        // Courier tried to connect; FoundationNetworking alone answers unsupportedURL.
        #expect(outcome.error?.code == .cannotConnectToHost)
    }

    @Test func uninstallHandsTheSchemesBackToFoundation() async throws {
        CourierFoundationBridge.uninstall()
        defer { _ = try? BridgeTestSetup.install() }
        let outcome = try await runDataTask(URLRequest(url: server.url("hello.txt")))
        #expect(outcome.error?.code == .unsupportedURL)
    }
}
