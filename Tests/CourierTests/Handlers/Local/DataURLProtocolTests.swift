import Foundation
import Testing
@testable import Courier

/// `data:` URLs loaded through `URLSession`.
@Suite("DataURLProtocol")
struct DataURLProtocolTests {

    private func url(_ string: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> URL {
        try #require(URL(string: string), sourceLocation: sourceLocation)
    }

    @Test func mediaTypeCharsetAndLength() async throws {
        let target = try url("data:text/html;charset=utf-8,%3Cb%3Ecaf%C3%A9%3C%2Fb%3E")
        let (data, response) = try await LocalTestSupport.withTimeout {
            try await URLSession(configuration: .ephemeral).data(from: target)
        }
        #expect(String(decoding: data, as: UTF8.self) == "<b>café</b>")
        #expect(response.mimeType == "text/html")
        #expect(response.textEncodingName == "utf-8")
        #expect(response.expectedContentLength == Int64(data.count))
        #expect(response.expectedContentLength == 12)
        #expect(response.url == target)
        // A data: response is a plain URLResponse, not an HTTP one.
        #expect(!(response is HTTPURLResponse))
    }

    @Test(arguments: [
        ("data:,x", "text/plain", "US-ASCII"),
        ("data:;charset=utf-8,x", "text/plain", "utf-8"),
        ("data:;base64,eA==", "text/plain", "US-ASCII"),
        ("data:text/html,x", "text/html", nil),
        ("data:image/png;base64,eA==", "image/png", nil),
        ("data:text/plain;charset=%22ISO-8859-1%22,x", "text/plain", "ISO-8859-1"),
        ("data:TEXT/CSV;CHARSET=utf-8,x", "text/csv", "utf-8"),
    ] as [(String, String, String?)])
    func defaultsThroughSession(string: String, mimeType: String, charset: String?) async throws {
        let target = try url(string)
        let (data, response, error) = try await LocalTestSupport.load(target)
        #expect(error == nil)
        #expect(data == Data("x".utf8))
        #expect(response?.mimeType == mimeType)
        #expect(response?.textEncodingName == charset)
        #expect(response?.expectedContentLength == 1)
    }

    @Test func caseInsensitiveSchemeAndMarker() async throws {
        for string in ["DATA:,Hello", "Data:;BASE64,SGVsbG8=", "data:text/plain;Base64,SGVsbG8"] {
            let (data, response, error) = try await LocalTestSupport.load(try url(string))
            #expect(error == nil, "\(string)")
            #expect(data == Data("Hello".utf8), "\(string)")
            #expect(response?.mimeType == "text/plain", "\(string)")
        }
    }

    @Test func base64WithWhitespaceAndEscapesInTheURL() async throws {
        // URL(string:) percent-encodes the space; the decoder must skip it after decoding.
        for string in ["data:;base64,SGVs bG8=", "data:;base64,SGVs%0D%0AbG8%3D", "data:;base64,%53GVsbG8"] {
            let (data, _, error) = try await LocalTestSupport.load(try url(string))
            #expect(error == nil, "\(string)")
            #expect(data == Data("Hello".utf8), "\(string)")
        }
    }

    @Test func emptyBody() async throws {
        let (data, response, error) = try await LocalTestSupport.load(try url("data:text/plain,"))
        #expect(error == nil)
        #expect(data == Data())
        #expect(response?.expectedContentLength == 0)
        #expect(response?.mimeType == "text/plain")
    }

    @Test func fragmentIsNotPartOfTheBody() async throws {
        let target = try url("data:,hello#world")
        let (data, response, error) = try await LocalTestSupport.load(target)
        #expect(error == nil)
        #expect(data == Data("hello".utf8))
        #expect(response?.expectedContentLength == 5)
        #expect(response?.url == target)
    }

    @Test func allByteValuesRoundTrip() async throws {
        let all = Data((0...255).map { UInt8($0) })
        for string in ["data:application/octet-stream;base64," + all.base64EncodedString(),
                       "data:application/octet-stream," + LocalTestSupport.percentEncodeAll(all),
                       "data:application/octet-stream," + LocalTestSupport.percentEncodeReserved(all)] {
            let (data, response, error) = try await LocalTestSupport.load(try url(string))
            #expect(error == nil)
            #expect(data == all)
            #expect(response?.expectedContentLength == 256)
            #expect(response?.mimeType == "application/octet-stream")
        }
    }

    @Test func deliveredToADataDelegate() async throws {
        let recorder = LocalDataRecorder()
        let session = LocalTestSupport.session(delegate: recorder)
        defer { session.finishTasksAndInvalidate() }
        let target = try url("data:application/json;charset=utf-8,%7B%22a%22%3A1%7D")
        session.dataTask(with: target).resume()
        #expect(await LocalTestSupport.eventually { recorder.completed })
        #expect(recorder.error == nil)
        #expect(recorder.body == Data("{\"a\":1}".utf8))
        #expect(recorder.response?.mimeType == "application/json")
        #expect(recorder.response?.textEncodingName == "utf-8")
        #expect(recorder.response?.expectedContentLength == 7)
    }

    @Test func downloadOfADataURL() async throws {
        let target = try url("data:text/plain;base64,SGVsbG8sIHdvcmxkIQ==")
        let (location, response) = try await LocalTestSupport.withTimeout {
            try await URLSession(configuration: .ephemeral).download(from: target)
        }
        defer { try? FileManager.default.removeItem(at: location) }
        #expect(try Data(contentsOf: location) == Data("Hello, world!".utf8))
        #expect(response.expectedContentLength == 13)
    }

    /// The handler delivers the whole body and finishes at once; a task suspended after that (here
    /// in `didReceive response`) must still deliver everything and complete when resumed.
    @Test func resumeAfterSuspendingAFinishedLoadCompletes() async throws {
        let suspended = ResultBox<Bool>()
        let recorder = LocalDataRecorder(onResponse: { dataTask in
            usleep(50_000) // let the handler report its data and its end
            dataTask.suspend()
            suspended.set(true)
        })
        let session = LocalTestSupport.session(delegate: recorder)
        defer { session.invalidateAndCancel() }
        let task = session.dataTask(with: try url("data:,hello"))
        task.resume()
        #expect(await LocalTestSupport.eventually { suspended.value != nil })
        try await Task.sleep(for: .milliseconds(50))
        #expect(task.state == .suspended)
        #expect(recorder.chunkCount == 0)
        task.resume()
        #expect(await LocalTestSupport.eventually(timeout: .seconds(5)) { recorder.completed },
                "resume() did not restart delivery: the task is stuck in state \(task.state)")
        #expect(recorder.body == Data("hello".utf8))
        #expect(recorder.error == nil)
    }

    // MARK: - Malformed

    /// Bad input that survives `URL(string:)`. (Bad percent escapes such as `%zz` or a trailing `%4`
    /// cannot reach the handler through a `URL`: `URL(string:)` re-encodes the `%` as `%25`. The
    /// decoder tests cover them.)
    @Test(arguments: [
        "data:text/plain",                 // no comma
        "data:",                           // nothing at all
        "data:;base64,SGV$bG8=",           // '$' is not base64
        "data:;base64,A",                  // a lone base64 character
        "data:;base64,SGVsbG8%00",         // NUL in base64
        "data:text,x",                     // media type without a subtype
        "data:text/,x",
        "data:te%20xt/plain,x",            // space in the type
        "data:text/pl@in,x",
        "data:base64,SGVsbG8=",            // "base64" without ";" is a media type, not the marker
        "data:text/plain#,x",              // the comma is in the fragment
    ])
    func malformedIsBadURL(string: String) async throws {
        let target = try url(string)
        let error = try await LocalTestSupport.loadError(target)
        #expect(error?.code == .badURL, "\(string)")
        #expect(error?.failingURL == target, "\(string)")
        #expect(error?.userInfo[URLError.failingURLStringKey] as? String == target.absoluteString, "\(string)")
    }

    @Test func malformedThroughAsyncAPIThrowsBadURL() async throws {
        let target = try url("data:;base64,***")
        await #expect {
            _ = try await LocalTestSupport.withTimeout { try await URLSession(configuration: .ephemeral).data(from: target) }
        } throws: { error in
            (error as? URLError)?.code == .badURL && (error as? URLError)?.failingURL == target
        }
    }

    /// Random strings as `data:` URLs through a session: every task completes, with a body or with
    /// `badURL`, and never with anything else.
    @Test func randomURLsCompleteWithBodyOrBadURL() async throws {
        var generator = SplitMix64(seed: 2397)
        let alphabet = Array("abcXYZ019+/=;,%\"#/.-_base64charset".unicodeScalars)
        let session = URLSession(configuration: .ephemeral)
        var loaded = 0
        for _ in 0..<200 {
            var tail = ""
            for _ in 0..<Int.random(in: 0...40, using: &generator) {
                tail.unicodeScalars.append(alphabet.randomElement(using: &generator)!)
            }
            guard let target = URL(string: "data:" + tail) else { continue }
            let (data, _, error) = try await LocalTestSupport.load(target, in: session)
            if let error {
                #expect((error as? URLError)?.code == .badURL, "\(tail): \(error)")
                #expect((error as? URLError)?.failingURL != nil, "\(tail)")
            } else {
                #expect(data != nil, "\(tail)")
            }
            loaded += 1
        }
        #expect(loaded > 100)
    }
}

extension LocalHandlerHeavyTests {
    /// Multi-megabyte `data:` URLs through a session.
    @Suite("DataURLProtocol (large)")
    struct DataURLProtocolLargeTests {

        @Test func eightMebibyteBase64URL() async throws {
            let payload = try LocalTestSupport.randomBytes(8 << 20)
            let target = try #require(URL(string: "data:application/octet-stream;base64," + payload.base64EncodedString()))
            let (data, response) = try await LocalTestSupport.withTimeout {
                try await URLSession(configuration: .ephemeral).data(from: target)
            }
            #expect(data.count == payload.count)
            #expect(data == payload)
            #expect(response.expectedContentLength == Int64(payload.count))
        }

        @Test func eightMebibytePercentEncodedURL() async throws {
            let payload = try LocalTestSupport.mostlyTextBytes(8 << 20)
            let target = try #require(URL(string: "data:application/octet-stream," + LocalTestSupport.percentEncodeReserved(payload)))
            let (data, response) = try await LocalTestSupport.withTimeout {
                try await URLSession(configuration: .ephemeral).data(from: target)
            }
            #expect(data.count == payload.count)
            #expect(data == payload)
            #expect(response.expectedContentLength == Int64(payload.count))
        }
    }
}
