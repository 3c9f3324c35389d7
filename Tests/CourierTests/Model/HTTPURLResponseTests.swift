import Foundation
import Testing
@testable import Courier

@Suite("URLResponse and HTTPURLResponse")
struct HTTPURLResponseTests {

    private let url = URL(string: "https://example.com/files/report.pdf")!

    private func response(_ headers: [String: String]?, status: Int = 200, url: URL? = nil) -> HTTPURLResponse? {
        HTTPURLResponse(url: url ?? self.url, statusCode: status, httpVersion: "HTTP/1.1", headerFields: headers)
    }

    @Test("URLResponse stores what it is given")
    func plainResponse() {
        let response = URLResponse(url: url, mimeType: "application/pdf", expectedContentLength: 42, textEncodingName: nil)
        #expect(response.url == url)
        #expect(response.mimeType == "application/pdf")
        #expect(response.expectedContentLength == 42)
        #expect(response.textEncodingName == nil)
        let copied = response.copy() as? URLResponse
        #expect(copied === response)
        #expect(response.description.contains("URL: https://example.com/files/report.pdf"))
    }

    @Test("the charset of Content-Type becomes a lowercased textEncodingName, as in FoundationNetworking")
    func charsetIsLowercased() throws {
        let r = try #require(response(["Content-Type": "text/html; charset=UTF-8"]))
        #expect(r.textEncodingName == "utf-8")
    }

    @Test("Content-Type gives a lowercased MIME type and an unquoted charset")
    func contentType() throws {
        let r = try #require(response(["content-type": "Text/HTML; charset=\"UTF-8\"", "Content-Length": "12"]))
        #expect(r.mimeType == "text/html")
        #expect(r.textEncodingName == "utf-8")
        #expect(r.expectedContentLength == 12)

        let plain = try #require(response(["Content-Type": "application/json"]))
        #expect(plain.mimeType == "application/json")
        #expect(plain.textEncodingName == nil)

        let spaced = try #require(response(["Content-Type": "text/plain ;  foo=bar; CHARSET = iso-8859-1 "]))
        #expect(spaced.mimeType == "text/plain")
        #expect(spaced.textEncodingName == "iso-8859-1")

        let none = try #require(response(nil))
        #expect(none.mimeType == nil)
        #expect(none.textEncodingName == nil)
    }

    @Test("Content-Length parsing, -1 when absent or invalid")
    func contentLength() throws {
        #expect(try #require(response([:])).expectedContentLength == -1)
        #expect(try #require(response(["Content-Length": "abc"])).expectedContentLength == -1)
        #expect(try #require(response(["Content-Length": "-5"])).expectedContentLength == -1)
        #expect(try #require(response(["Content-Length": " 1024 "])).expectedContentLength == 1024)
        #expect(HTTPURLResponse.parseContentLength("10, 10") == 10)
        #expect(HTTPURLResponse.parseContentLength("10, 11") == -1)
    }

    @Test("header look-up is case-insensitive; well-known names are canonicalised")
    func headers() throws {
        let r = try #require(response(["content-type": "text/plain", "x-custom-thing": "v", "ETAG": "\"abc\""], status: 201))
        #expect(r.statusCode == 201)
        #expect(r.value(forHTTPHeaderField: "Content-Type") == "text/plain")
        #expect(r.value(forHTTPHeaderField: "X-CUSTOM-THING") == "v")
        #expect(r.value(forHTTPHeaderField: "etag") == "\"abc\"")
        let all = r.allHeaderFields
        #expect(all.count == 3)
        #expect(all["Content-Type"] as? String == "text/plain")
        #expect(all["ETag"] as? String == "\"abc\"")
        #expect(all["x-custom-thing"] as? String == "v")
        #expect(r.httpVersion == "HTTP/1.1")
    }

    @Test("internal init keeps order and joins repeated fields")
    func internalInit() {
        let fields = HTTPHeaderFields(pairs: [("vary", "Accept"), ("Set-Cookie", "a=1"), ("set-cookie", "b=2")])
        let r = HTTPURLResponse(url: url, statusCode: 200, httpVersion: "HTTP/2", fields: fields)
        #expect(r.headerFields.names == ["Vary", "Set-Cookie"])
        #expect(r.value(forHTTPHeaderField: "set-cookie") == "a=1,b=2")
    }

    @Test("suggestedFilename replaces a slash in the Content-Disposition filename with an underscore")
    func suggestedFilenameReplacesSlashes() throws {
        let r = try #require(response(["Content-Disposition": "attachment; filename=\"a/b/c.txt\""]))
        #expect(r.suggestedFilename == "a_b_c.txt")
    }

    @Test("suggestedFilename: Content-Disposition, then last path component, then Unknown")
    func suggestedFilename() throws {
        #expect(try #require(response(["Content-Disposition": "attachment; filename=\"q3 results.pdf\""])).suggestedFilename == "q3 results.pdf")
        #expect(try #require(response(["Content-Disposition": "attachment; filename=plain.txt"])).suggestedFilename == "plain.txt")
        #expect(try #require(response(["Content-Disposition": "attachment; filename=\"a.txt\"; filename*=UTF-8''na%C3%AFve.txt"])).suggestedFilename == "naïve.txt")
        #expect(try #require(response(["Content-Disposition": "attachment; filename=\"../../etc/passwd\""])).suggestedFilename == ".._.._etc_passwd")
        #expect(try #require(response(["Content-Disposition": "attachment; filename=\"say \\\"hi\\\".txt\""])).suggestedFilename == "say \"hi\".txt")
        // A disposition without a usable name falls back to the URL.
        #expect(try #require(response(["Content-Disposition": "inline"])).suggestedFilename == "report.pdf")
        #expect(try #require(response(["Content-Disposition": "attachment; filename=\"..\""])).suggestedFilename == "report.pdf")
        #expect(try #require(response(nil)).suggestedFilename == "report.pdf")

        let encoded = URL(string: "https://example.com/dir/my%20file.json")!
        #expect(try #require(response(nil, url: encoded)).suggestedFilename == "my file.json")
        #expect(try #require(response(nil, url: URL(string: "https://example.com/")!)).suggestedFilename == "Unknown")
        #expect(try #require(response(nil, url: URL(string: "https://example.com")!)).suggestedFilename == "Unknown")

        // A plain URLResponse has no headers, so it uses the URL.
        let plain = URLResponse(url: url, mimeType: nil, expectedContentLength: -1, textEncodingName: nil)
        #expect(plain.suggestedFilename == "report.pdf")
    }

    @Test("localizedString(forStatusCode:) uses lowercase phrases and class fallbacks")
    func statusStrings() {
        #expect(HTTPURLResponse.localizedString(forStatusCode: 404) == "not found")
        #expect(HTTPURLResponse.localizedString(forStatusCode: 200) == "no error")
        #expect(HTTPURLResponse.localizedString(forStatusCode: 500) == "internal server error")
        #expect(HTTPURLResponse.localizedString(forStatusCode: 301) == "moved permanently")
        #expect(HTTPURLResponse.localizedString(forStatusCode: 429) == "too many requests")
        #expect(HTTPURLResponse.localizedString(forStatusCode: 199) == "informational")
        #expect(HTTPURLResponse.localizedString(forStatusCode: 299) == "success")
        #expect(HTTPURLResponse.localizedString(forStatusCode: 399) == "redirected")
        #expect(HTTPURLResponse.localizedString(forStatusCode: 499) == "client error")
        #expect(HTTPURLResponse.localizedString(forStatusCode: 599) == "server error")
        #expect(HTTPURLResponse.localizedString(forStatusCode: 700) == "server error")
        for code in 100...599 {
            let text = HTTPURLResponse.localizedString(forStatusCode: code)
            #expect(!text.isEmpty)
            #expect(text == text.lowercased() || text.contains("URL"))
        }
    }

    @Test("description lists status and headers")
    func description() throws {
        let r = try #require(response(["Content-Type": "text/plain"], status: 404))
        #expect(r.description.contains("Status Code: 404"))
        #expect(r.description.contains("\"Content-Type\""))
        #expect(r.description.contains("text/plain"))
        #expect(r.description.hasPrefix("<HTTPURLResponse: 0x"))
    }

    @Test("isEqual and hash")
    func equality() throws {
        let a = try #require(response(["Content-Type": "text/plain"]))
        let b = try #require(response(["content-type": "text/plain"]))
        #expect(a.isEqual(b))
        #expect(a.hash == b.hash)
        let other: HTTPURLResponse = try #require(response(["Content-Type": "text/plain"], status: 500))
        #expect(!a.isEqual(other))
        #expect(!a.isEqual(URLResponse(url: url, mimeType: "text/plain", expectedContentLength: -1, textEncodingName: nil)))
    }

    @Test("keyed archiving round-trips URLResponse and HTTPURLResponse")
    func codingRoundTrip() throws {
        let plain = URLResponse(url: url, mimeType: "application/pdf", expectedContentLength: 99, textEncodingName: "utf-8")
        let plainData = try NSKeyedArchiver.archivedData(withRootObject: plain, requiringSecureCoding: true)
        let decodedPlain = try #require(try NSKeyedUnarchiver.unarchivedObject(ofClass: URLResponse.self, from: plainData))
        #expect(decodedPlain.url == url)
        #expect(decodedPlain.mimeType == "application/pdf")
        #expect(decodedPlain.expectedContentLength == 99)
        #expect(decodedPlain.textEncodingName == "utf-8")
        #expect(decodedPlain.isEqual(plain))

        let http = try #require(response(["Content-Type": "text/html; charset=utf-8", "Content-Length": "5", "X-Id": "7"], status: 418))
        let httpData = try NSKeyedArchiver.archivedData(withRootObject: http, requiringSecureCoding: true)
        let decoded = try #require(try NSKeyedUnarchiver.unarchivedObject(ofClass: HTTPURLResponse.self, from: httpData))
        #expect(decoded.statusCode == 418)
        #expect(decoded.mimeType == "text/html")
        #expect(decoded.textEncodingName == "utf-8")
        #expect(decoded.expectedContentLength == 5)
        #expect(decoded.value(forHTTPHeaderField: "x-id") == "7")
        #expect(decoded.headerFields.names == http.headerFields.names)
        #expect(decoded.httpVersion == "HTTP/1.1")
        #expect(decoded.isEqual(http))
    }
}
