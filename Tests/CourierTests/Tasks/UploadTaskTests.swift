import Foundation
import Testing
@testable import Courier

@Suite("Upload tasks")
struct UploadTaskTests {

    private func postRequest(_ url: URL = EchoURLProtocol.makeURL()) -> URLRequest {
        var request = URLRequest(url: url)
        request.httpMethod = "POST"
        return request
    }

    @Test("from Data: the protocol reads request.httpBody and the echo arrives in order")
    func fromData() async throws {
        let body = TestFiles.bytes(count: 300_000, seed: 21)
        let delegate = EventDelegate()
        let session = EchoURLProtocol.session(delegate: delegate)
        defer { session.invalidateAndCancel() }
        let task = session.uploadTask(with: postRequest(), from: body)
        #expect(task.countOfBytesExpectedToSend == Int64(body.count))
        task.resume()

        #expect(await delegate.waitForCompletion(of: task))
        #expect(delegate.collapsedNames(for: task) == ["response", "data", "metrics", "complete"])
        #expect(delegate.error(of: task) == nil)
        #expect(delegate.body(of: task) == body)
        let response = try #require(delegate.response(of: task) as? HTTPURLResponse)
        // Apple's loader may hand a Data body to a protocol as a stream; either way the bytes arrive.
        #expect(["data", "stream"].contains(response.value(forHTTPHeaderField: "X-Body-Source") ?? ""))
        #expect(response.value(forHTTPHeaderField: "X-Method") == "POST")
    }

    @Test("from a file: the protocol reads request.httpBodyStream with the file's bytes")
    func fromFile() async throws {
        let body = TestFiles.bytes(count: 700_001, seed: 22)
        let file = try TestFiles.make(body)
        defer { TestFiles.remove(file) }
        let delegate = EventDelegate()
        let session = EchoURLProtocol.session(delegate: delegate)
        defer { session.invalidateAndCancel() }
        let task = session.uploadTask(with: postRequest(), fromFile: file)
        #expect(task.countOfBytesExpectedToSend == Int64(body.count))
        task.resume()

        #expect(await delegate.waitForCompletion(of: task))
        #expect(delegate.collapsedNames(for: task) == ["response", "data", "metrics", "complete"])
        #expect(delegate.error(of: task) == nil)
        #expect(delegate.body(of: task) == body)
        let response = try #require(delegate.response(of: task) as? HTTPURLResponse)
        #expect(response.value(forHTTPHeaderField: "X-Body-Source") == "stream")
    }

    @Test("withStreamedRequest: needNewBodyStream is asked first, then the stream's bytes are sent")
    func streamed() async throws {
        let body = TestFiles.bytes(count: 123_457, seed: 23)
        var hooks = EventDelegate.Hooks()
        hooks.bodyStream = { _ in InputStream(data: body) }
        let delegate = EventDelegate(hooks)
        let session = EchoURLProtocol.session(delegate: delegate)
        defer { session.invalidateAndCancel() }
        let task = session.uploadTask(withStreamedRequest: postRequest())
        task.resume()

        #expect(await delegate.waitForCompletion(of: task))
        #expect(delegate.collapsedNames(for: task) == ["needStream", "response", "data", "metrics", "complete"])
        #expect(delegate.events(for: task).filter { $0.name == "needStream" }.count == 1)
        #expect(delegate.error(of: task) == nil)
        #expect(delegate.body(of: task) == body)
        let response = try #require(delegate.response(of: task) as? HTTPURLResponse)
        #expect(response.value(forHTTPHeaderField: "X-Body-Source") == "stream")
    }

    @Test("with a completion handler: the echoed body comes back whole")
    func completionHandler() async throws {
        let body = Data("name=courier&kind=test".utf8)
        let session = EchoURLProtocol.session()
        defer { session.invalidateAndCancel() }
        let shot = OneShot<DataResult>()
        let task = session.uploadTask(with: postRequest(), from: body) { data, response, error in
            shot.fulfil(DataResult(data: data, response: response, error: error))
        }
        task.resume()
        let result = try await shot.wait()
        #expect(result.error == nil)
        #expect(result.data == body)
        #expect((result.response as? HTTPURLResponse)?.statusCode == 200)
    }

    @Test("an upload from a file that does not exist fails with fileDoesNotExist, no crash")
    func missingFile() async throws {
        let directory = try TestFiles.makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let delegate = EventDelegate()
        let session = EchoURLProtocol.session(delegate: delegate)
        defer { session.invalidateAndCancel() }
        let request = postRequest()
        let task = session.uploadTask(with: request, fromFile: directory.appendingPathComponent("nope.bin"))
        task.resume()
        #expect(await delegate.waitForCompletion(of: task))
        let error = try #require(delegate.error(of: task) as? URLError)
        #expect(error.code == .fileDoesNotExist)
        #expect(error.failingURL == request.url)
        #expect(!delegate.collapsedNames(for: task).contains("response"))
    }
}
