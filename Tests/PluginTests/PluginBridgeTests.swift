import Foundation
import Testing
@testable import Courier
#if canImport(Glibc)
import Glibc
#endif

/// The host side of the C ABI, driven by a plugin that breaks the contract
/// (`Tests/PluginFixtures/Misbehaving`): every misuse becomes a `URLError` or is ignored, and the
/// host never crashes. Also: a plugin task is cancelled and times out like a built-in one, and each
/// handle the plugin creates is destroyed exactly once.
@Suite("Plugin bridge")
struct PluginBridgeTests {
    private func url(_ scheme: String) -> URL { URL(string: "\(scheme)://fixture/resource")! }

    @Test func repeatedAndLateReportsAfterTheEndAreIgnored() async throws {
        try InstalledPlugins.install()
        let result = await fetch(url("misbehave-twice"))
        #expect(result.error == nil, "\(String(describing: result.error))")
        #expect(result.text == "hello")
    }

    @Test func aNullResponseFailsTheLoad() async throws {
        try InstalledPlugins.install()
        let target = url("misbehave-null")
        let result = await fetch(target)
        #expect(result.urlError?.code == .badServerResponse)
        #expect(result.urlError?.failingURL == target)
        #expect(result.urlError?.localizedDescription.contains("misbehaving") == true)
    }

    @Test func dataAtANullPointerFailsTheLoad() async throws {
        try InstalledPlugins.install()
        #expect(await fetch(url("misbehave-nulldata")).urlError?.code == .badServerResponse)
    }

    @Test func anUnknownErrorCodeBecomesUnknown() async throws {
        try InstalledPlugins.install()
        let result = await fetch(url("misbehave-badcode"))
        #expect(result.urlError?.code == .unknown)
        #expect(result.urlError?.localizedDescription.contains("12345") == true)
        #expect(result.urlError?.failingURL == url("misbehave-badcode"))
    }

    @Test func anInvalidStatusCodeFailsTheLoad() async throws {
        try InstalledPlugins.install()
        let result = await fetch(url("misbehave-badstatus"))
        #expect(result.urlError?.code == .badServerResponse)
        #expect(result.urlError?.localizedDescription.contains("42") == true)
    }

    @Test func dataWithoutAResponseGetsADefaultResponse() async throws {
        try InstalledPlugins.install()
        let result = await fetch(url("misbehave-noresponse"))
        #expect(result.error == nil)
        #expect(result.text == "orphan")
        #expect(result.response?.url == url("misbehave-noresponse"))
    }

    @Test func anHTTPLikeResponseBecomesAnHTTPURLResponse() async throws {
        try InstalledPlugins.install()
        let result = await fetch(url("misbehave-http"))
        let response = try #require(result.response as? HTTPURLResponse)
        #expect(response.statusCode == 201)
        #expect(response.value(forHTTPHeaderField: "x-fixture") == "yes")
        #expect(response.mimeType == "text/plain")
        #expect(response.textEncodingName == "utf-8")
        #expect(response.expectedContentLength == 7)
        #expect(result.text == "created")
    }

    @Test func aRedirectStartsANewLoadForTheNewURL() async throws {
        try InstalledPlugins.install()
        let result = await fetch(url("misbehave-redirect"))
        #expect(result.error == nil, "\(String(describing: result.error))")
        #expect(result.text == "hello")
        #expect(result.response?.url == URL(string: "misbehave-twice://fixture/redirected"))
        let bad = await fetch(url("misbehave-badredirect"))
        #expect(bad.urlError?.code == .redirectToNonExistentLocation)
    }

    @Test func aPluginThatCreatesNoHandlerFailsTheTask() async throws {
        try InstalledPlugins.install()
        let result = await fetch(url("misbehave-nocreate"))
        #expect(result.urlError?.code == .resourceUnavailable)
    }

    @Test func callsAfterDestroyReachNothing() async throws {
        try InstalledPlugins.install()
        let result = await fetch(url("misbehave-late"))
        #expect(result.error == nil)
        #expect(result.text == "")
        // The fixture calls the client again 200 ms later, from its own thread, with a stale token.
        try await Task.sleep(nanoseconds: 500_000_000)
        let again = await fetch(url("misbehave-twice"))
        #expect(again.text == "hello")
    }

    @Test func requestsNeedTheMatchingCapability() async throws {
        try InstalledPlugins.install()
        var post = URLRequest(url: url("misbehave-echo"))
        post.httpMethod = "POST"
        post.httpBody = Data("the body".utf8)
        #expect(await fetch(post).text == "POST the body")
        var upload = URLRequest(url: url("misbehave-echo"))
        upload.httpMethod = "PUT"
        let (echoed, _) = try await makeSession().upload(for: upload, from: Data("uploaded".utf8))
        #expect(String(decoding: echoed, as: UTF8.self) == "PUT uploaded")
        var put = URLRequest(url: url("misbehave-twice"))
        put.httpMethod = "PUT"
        let refused = await fetch(put)
        #expect(refused.urlError?.code == .unsupportedURL)
        #expect(refused.urlError?.localizedDescription.contains("cannot write") == true)
    }

    @Test func aHangingPluginTaskIsCancelledAndTimesOut() async throws {
        try InstalledPlugins.install()
        let stopsBefore = try Self.counters()[2]
        let delegate = RecordingDelegate()
        let session = makeSession(delegate: delegate)
        let task = session.dataTask(with: url("misbehave-hang"))
        task.resume()
        try await Task.sleep(nanoseconds: 100_000_000)
        task.cancel()
        #expect(await delegate.waitForCompletion())
        #expect((delegate.record.current.error as? URLError)?.code == .cancelled)
        #expect(await waitUntil { ((try? Self.counters()[2]) ?? 0) > stopsBefore }, "the plugin was not stopped")

        let timed = await fetch(url("misbehave-hang"), session: makeSession(requestTimeout: 0.3))
        #expect(timed.urlError?.code == .timedOut)
        #expect(timed.urlError?.failingURL == url("misbehave-hang"))
    }

    /// The plugin reports everything from inside start; the task is suspended while its delegate
    /// decides on the response, so the load ends while the task is suspended. Resuming must still
    /// deliver the body and the completion.
    @Test func aTaskSuspendedAfterThePluginFinishedCompletesWhenResumed() async throws {
        try InstalledPlugins.install()
        let delegate = RecordingDelegate()
        let suspended = Locked(false)
        delegate.onResponse = { task in
            task.suspend()
            // Hold the delegate queue until the plugin has finished on its own thread.
            Thread.sleep(forTimeInterval: 0.2)
            suspended.withLock { $0 = true }
        }
        let task = makeSession(delegate: delegate).dataTask(with: url("misbehave-http"))
        task.resume()
        #expect(await waitUntil { suspended.current })
        try await Task.sleep(nanoseconds: 200_000_000)
        #expect(!delegate.record.current.completed, "a suspended task delivered its completion")
        #expect(task.state == .suspended)
        task.resume()
        #expect(await delegate.waitForCompletion())
        #expect(delegate.record.current.error == nil)
        #expect(delegate.record.current.body == Data("created".utf8))
    }

    @Test func everyHandleIsDestroyedExactlyOnce() async throws {
        try InstalledPlugins.install()
        for scheme in ["misbehave-twice", "misbehave-null", "misbehave-http", "misbehave-redirect", "misbehave-late"] {
            _ = await fetch(url(scheme))
        }
        let settled = await waitUntil {
            guard let counts = try? Self.counters() else { return false }
            return counts[0] == counts[3] && counts[0] == counts[1]
        }
        let counts = try Self.counters()
        #expect(settled, "created, started, stopped, destroyed: \(counts)")
        #expect(counts[0] >= 5)
        #expect(PluginClientTable.shared.connectionCount < 50, "tokens are released")
    }

    /// The fixture's counters: created, started, stopped, destroyed. Read through the library the
    /// host already opened (dlopen of the same file returns the same handle).
    static func counters() throws -> [Int64] {
        let installed = try InstalledPlugins.install()
        let path = installed.directory.appendingPathComponent("libCourierTestPluginMisbehaving.so").path
        // The host opens the library on first use; make sure it has, then find it without loading it again.
        guard case .success? = PluginLoader.shared.open(scheme: "misbehave-twice") else {
            throw InstalledPlugins.InstallError(description: "the misbehaving fixture did not open")
        }
        let handle = try #require(dlopen(path, RTLD_NOW | RTLD_NOLOAD), "the fixture is not loaded")
        defer { dlclose(handle) }
        let symbol = try #require(dlsym(handle, "courier_test_misbehaving_counters"))
        typealias Counters = @convention(c) (UnsafeMutablePointer<Int64>) -> Void
        var counts = [Int64](repeating: 0, count: 4)
        counts.withUnsafeMutableBufferPointer { unsafeBitCast(symbol, to: Counters.self)($0.baseAddress!) }
        return counts
    }
}
