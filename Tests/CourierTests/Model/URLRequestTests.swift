import Foundation
import Testing
@testable import Courier

@Suite("URLRequest")
struct URLRequestTests {

    private let url = URL(string: "https://example.com/path/file.txt?q=1")!

    @Test("a new request has Apple's defaults")
    func defaults() {
        let request = URLRequest(url: url)
        #expect(request.url == url)
        #expect(request.cachePolicy == .useProtocolCachePolicy)
        #expect(request.timeoutInterval == 60)
        #expect(request.mainDocumentURL == nil)
        #expect(request.networkServiceType == .default)
        #expect(request.allowsCellularAccess)
        #expect(request.httpMethod == "GET")
        #expect(request.allHTTPHeaderFields == nil)
        #expect(request.httpBody == nil)
        #expect(request.httpBodyStream == nil)
        #expect(request.httpShouldHandleCookies)
        #expect(request._shouldUsePipelining == false)

        let custom = URLRequest(url: url, cachePolicy: .returnCacheDataDontLoad, timeoutInterval: 5)
        #expect(custom.cachePolicy == .returnCacheDataDontLoad)
        #expect(custom.timeoutInterval == 5)
    }

    @Test("a URL relative to a base URL is stored as its absolute URL")
    func relativeURLIsStoredAbsolute() throws {
        let relative = try #require(URL(string: "b", relativeTo: URL(string: "http://h/a/")))
        let request = URLRequest(url: relative)
        #expect(request.url == URL(string: "http://h/a/b"))
    }

    @Test("NSURLRequest stores a relative URL as its absolute URL too")
    func relativeURLIsStoredAbsoluteByNSURLRequest() throws {
        let relative = try #require(URL(string: "b", relativeTo: URL(string: "http://h/a/")))
        #expect(NSMutableURLRequest(url: relative).url == URL(string: "http://h/a/b"))
    }

    @Test("httpMethod: nil resets to GET, standard methods are upper-cased")
    func httpMethod() {
        var request = URLRequest(url: url)
        request.httpMethod = "post"
        #expect(request.httpMethod == "POST")
        request.httpMethod = nil
        #expect(request.httpMethod == "GET")
        request.httpMethod = "Delete"
        #expect(request.httpMethod == "DELETE")
        request.httpMethod = "PATCH"
        #expect(request.httpMethod == "PATCH")
        request.httpMethod = "propfind"
        #expect(request.httpMethod == "propfind")
    }

    @Test("header fields are case-insensitive; addValue joins with a comma")
    func headers() {
        var request = URLRequest(url: url)
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        #expect(request.value(forHTTPHeaderField: "content-type") == "application/json")
        request.setValue("text/plain", forHTTPHeaderField: "CONTENT-TYPE")
        #expect(request.allHTTPHeaderFields == ["Content-Type": "text/plain"])

        request.addValue("a", forHTTPHeaderField: "X-List")
        request.addValue("b", forHTTPHeaderField: "x-list")
        #expect(request.value(forHTTPHeaderField: "X-LIST") == "a,b")

        request.setValue(nil, forHTTPHeaderField: "content-type")
        request.setValue(nil, forHTTPHeaderField: "X-List")
        #expect(request.value(forHTTPHeaderField: "Content-Type") == nil)
        // Once headers were touched, Apple reports an empty dictionary rather than nil.
        #expect(request.allHTTPHeaderFields == [:])

        request.allHTTPHeaderFields = ["Accept": "*/*"]
        #expect(request.value(forHTTPHeaderField: "accept") == "*/*")
        request.allHTTPHeaderFields = nil
        #expect(request.allHTTPHeaderFields == nil)
        #expect(request.value(forHTTPHeaderField: "accept") == nil)
    }

    @Test("setValue drops a value holding a line break, as FoundationNetworking does")
    func setValueDropsALineBreak() {
        var request = URLRequest(url: url)
        request.setValue("a\r\nX-Injected: yes", forHTTPHeaderField: "X-Note")
        #expect(request.allHTTPHeaderFields == nil)
    }

    @Test("setValue with a value holding a line feed keeps the previous value")
    func setValueWithALineFeedKeepsThePreviousValue() {
        var request = URLRequest(url: url)
        request.setValue("ok", forHTTPHeaderField: "X-Note")
        request.setValue("a\nb", forHTTPHeaderField: "X-Note")
        #expect(request.value(forHTTPHeaderField: "X-Note") == "ok")
    }

    @Test("addValue drops a value holding NUL")
    func addValueDropsNUL() {
        var request = URLRequest(url: url)
        request.addValue("ok", forHTTPHeaderField: "X-Note")
        request.addValue("a\u{0}b", forHTTPHeaderField: "X-Note")
        #expect(request.value(forHTTPHeaderField: "X-Note") == "ok")
    }

    @Test("assigning allHTTPHeaderFields leaves out an entry holding a carriage return")
    func allHTTPHeaderFieldsLeavesOutALineBreak() {
        var request = URLRequest(url: url)
        request.allHTTPHeaderFields = ["X-Bad": "e\rf", "X-Good": "fine"]
        #expect(request.allHTTPHeaderFields == ["X-Good": "fine"])
    }

    @Test("a folded value (CRLF then a space) is kept, as FoundationNetworking keeps it")
    func foldedValueIsKept() {
        var request = URLRequest(url: url)
        request.setValue("a\r\n b", forHTTPHeaderField: "X-Note")
        #expect(request.value(forHTTPHeaderField: "X-Note") == "a\r\n b")
    }

    @Test("NSMutableURLRequest.setValue drops a value holding a line break")
    func mutableRequestDropsALineBreak() {
        let request = NSMutableURLRequest(url: url)
        request.setValue("a\r\nb", forHTTPHeaderField: "X-Note")
        #expect(request.value(forHTTPHeaderField: "X-Note") == nil)
    }

    @Test("internal headerFields keeps insertion order")
    func orderedHeaders() {
        var request = URLRequest(url: url)
        request.setValue("1", forHTTPHeaderField: "Zeta")
        request.setValue("2", forHTTPHeaderField: "Alpha")
        request.addValue("3", forHTTPHeaderField: "Mu")
        #expect(request.headerFields.names == ["Zeta", "Alpha", "Mu"])
        #expect(URLRequest(url: url).headerFields.isEmpty)
    }

    @Test("httpBody and httpBodyStream are mutually exclusive")
    func bodyExclusivity() {
        var request = URLRequest(url: url)
        request.httpBody = Data("hello".utf8)
        #expect(request.httpBody == Data("hello".utf8))

        let stream = InputStream(data: Data("stream".utf8))
        request.httpBodyStream = stream
        #expect(request.httpBody == nil)
        #expect(request.httpBodyStream === stream)

        request.httpBody = Data([1, 2, 3])
        #expect(request.httpBodyStream == nil)
        #expect(request.httpBody == Data([1, 2, 3]))

        // Setting nil on the absent one leaves the other alone.
        request.httpBodyStream = nil
        #expect(request.httpBody == Data([1, 2, 3]))
        request.httpBody = nil
        #expect(request.httpBody == nil)
    }

    @Test("copies are independent values")
    func copySemantics() {
        var original = URLRequest(url: url)
        original.setValue("1", forHTTPHeaderField: "X-A")
        var copy = original
        copy.url = URL(string: "https://other.example/")
        copy.httpMethod = "PUT"
        copy.setValue("2", forHTTPHeaderField: "x-a")
        copy.timeoutInterval = 1
        copy.cachePolicy = .reloadIgnoringLocalCacheData
        copy.mainDocumentURL = url
        copy.allowsCellularAccess = false
        copy.httpShouldHandleCookies = false
        copy.networkServiceType = .background
        copy.httpBody = Data([9])

        #expect(original.url == url)
        #expect(original.httpMethod == "GET")
        #expect(original.value(forHTTPHeaderField: "X-A") == "1")
        #expect(original.timeoutInterval == 60)
        #expect(original.cachePolicy == .useProtocolCachePolicy)
        #expect(original.mainDocumentURL == nil)
        #expect(original.allowsCellularAccess)
        #expect(original.httpShouldHandleCookies)
        #expect(original.networkServiceType == .default)
        #expect(original.httpBody == nil)

        // A fresh default request is unaffected by mutations of others (shared default storage).
        #expect(URLRequest(url: url).timeoutInterval == 60)
    }

    @Test("equality and hashing cover every property; header names compare case-insensitively")
    func equality() {
        var a = URLRequest(url: url)
        var b = URLRequest(url: url)
        #expect(a == b)
        #expect(a.hashValue == b.hashValue)

        a.setValue("x", forHTTPHeaderField: "Foo")
        b.setValue("x", forHTTPHeaderField: "FOO")
        #expect(a == b)
        #expect(a.hashValue == b.hashValue)

        b.timeoutInterval = 30
        #expect(a != b)
        b.timeoutInterval = 60
        #expect(a == b)

        b.httpBody = Data([1])
        #expect(a != b)
        a.httpBody = Data([1])
        #expect(a == b)

        let stream = InputStream(data: Data())
        a.httpBodyStream = stream
        b.httpBodyStream = InputStream(data: Data())
        #expect(a != b, "streams compare by identity")
        b.httpBodyStream = stream
        #expect(a == b)

        b.httpMethod = "HEAD"
        #expect(a != b)
    }

    @Test("protocol properties are stored copy-on-write and ignored by ==")
    func protocolProperties() {
        var request = URLRequest(url: url)
        #expect(request.protocolProperty(forKey: "handled") == nil)

        request.setProtocolProperty(true, forKey: "handled")
        request.setProtocolProperty(["a": 1], forKey: "info")
        #expect(request.protocolProperty(forKey: "handled") as? Bool == true)
        #expect((request.protocolProperty(forKey: "info") as? [String: Int])?["a"] == 1)

        let copy = request
        request.removeProtocolProperty(forKey: "handled")
        #expect(request.protocolProperty(forKey: "handled") == nil)
        #expect(copy.protocolProperty(forKey: "handled") as? Bool == true)

        #expect(request == URLRequest(url: url))
        #expect(request.hashValue == URLRequest(url: url).hashValue)

        // Removing an absent key is harmless.
        request.removeProtocolProperty(forKey: "missing")
        #expect(request.protocolProperty(forKey: "info") != nil)
    }

    @Test("description, debugDescription and mirror")
    func descriptions() {
        var request = URLRequest(url: url)
        #expect(request.description == url.absoluteString)
        #expect(request.debugDescription == url.absoluteString)
        request.url = nil
        #expect(request.description == "url: nil")

        let labels = URLRequest(url: url).customMirror.children.compactMap(\.label)
        #expect(labels.contains("url"))
        #expect(labels.contains("httpMethod"))
        #expect(labels.contains("allHTTPHeaderFields"))
        #expect(labels.count == 12)
    }

    @Test("cache policy and service type raw values are Apple's")
    func rawValues() {
        #expect(URLRequest.CachePolicy.useProtocolCachePolicy.rawValue == 0)
        #expect(URLRequest.CachePolicy.reloadIgnoringLocalCacheData.rawValue == 1)
        #expect(URLRequest.CachePolicy.returnCacheDataElseLoad.rawValue == 2)
        #expect(URLRequest.CachePolicy.returnCacheDataDontLoad.rawValue == 3)
        #expect(URLRequest.CachePolicy.reloadIgnoringLocalAndRemoteCacheData.rawValue == 4)
        #expect(URLRequest.CachePolicy.reloadRevalidatingCacheData.rawValue == 5)
        #expect(URLRequest.CachePolicy.reloadIgnoringCacheData == .reloadIgnoringLocalCacheData)
        #expect(URLRequest.NetworkServiceType.networkServiceTypeCallSignaling.rawValue == 11)
    }
}

@Suite("NSURLRequest / NSMutableURLRequest")
struct NSURLRequestTests {

    private let url = URL(string: "https://example.com/upload")!

    @Test("mutable request setters update the wrapped value")
    func mutableSetters() {
        let request = NSMutableURLRequest(url: url)
        #expect(request.httpMethod == "GET")
        #expect(request.timeoutInterval == 60)
        request.httpMethod = "post"
        request.setValue("1", forHTTPHeaderField: "X-One")
        request.addValue("2", forHTTPHeaderField: "x-one")
        request.httpBody = Data("body".utf8)
        request.timeoutInterval = 12
        request.cachePolicy = .reloadIgnoringLocalCacheData
        request.httpShouldHandleCookies = false

        #expect(request.httpMethod == "POST")
        #expect(request.value(forHTTPHeaderField: "X-ONE") == "1,2")
        #expect(request.httpBody == Data("body".utf8))

        let value = request.swiftValue
        #expect(value.httpMethod == "POST")
        #expect(value.timeoutInterval == 12)
        #expect(value.cachePolicy == .reloadIgnoringLocalCacheData)
        #expect(value.httpShouldHandleCookies == false)
        #expect(URLRequest(request) == value)
    }

    @Test("copy and mutableCopy")
    func copying() throws {
        let immutable = NSURLRequest(url: url)
        let copied = immutable.copy() as? NSURLRequest
        #expect(copied === immutable)

        let mutable = try #require(immutable.mutableCopy() as? NSMutableURLRequest)
        mutable.httpMethod = "PUT"
        #expect(immutable.httpMethod == "GET")
        #expect(mutable.httpMethod == "PUT")

        let copyOfMutable = try #require(mutable.copy() as? NSMutableURLRequest)
        #expect(copyOfMutable !== mutable)
        #expect(copyOfMutable.isEqual(mutable))
        mutable.httpMethod = "DELETE"
        #expect(copyOfMutable.httpMethod == "PUT")
        #expect(!copyOfMutable.isEqual(mutable))
    }

    @Test("protocol properties survive mutableCopy")
    func propertiesSurviveCopy() throws {
        let mutable = NSMutableURLRequest(url: url)
        mutable._request.setProtocolProperty("v", forKey: "k")
        let copy = try #require(mutable.mutableCopy() as? NSMutableURLRequest)
        #expect(copy._request.protocolProperty(forKey: "k") as? String == "v")
    }

    @Test("isEqual and hash follow the wrapped value")
    func equality() {
        let a = NSURLRequest(url: url)
        let b = NSURLRequest(url: url)
        #expect(a.isEqual(b))
        #expect(a.hash == b.hash)
        #expect(!a.isEqual(NSURLRequest(url: URL(string: "https://example.com/other")!)))
        #expect(!a.isEqual("not a request"))
        #expect(a.description.contains("URL: https://example.com/upload"))
    }

    @Test("keyed archiving round-trips every archived property")
    func codingRoundTrip() throws {
        let original = NSMutableURLRequest(url: url, cachePolicy: .returnCacheDataElseLoad, timeoutInterval: 7.5)
        original.httpMethod = "POST"
        original.mainDocumentURL = URL(string: "https://example.com/")
        original.setValue("application/json", forHTTPHeaderField: "Content-Type")
        original.addValue("x", forHTTPHeaderField: "X-Trace")
        original.httpBody = Data("{}".utf8)
        original.networkServiceType = .video
        original.allowsCellularAccess = false
        original.httpShouldHandleCookies = false

        let data = try NSKeyedArchiver.archivedData(withRootObject: original, requiringSecureCoding: true)
        let decoded = try #require(try NSKeyedUnarchiver.unarchivedObject(ofClass: NSMutableURLRequest.self, from: data))
        #expect(decoded.url == url)
        #expect(decoded.mainDocumentURL == URL(string: "https://example.com/"))
        #expect(decoded.cachePolicy == .returnCacheDataElseLoad)
        #expect(decoded.timeoutInterval == 7.5)
        #expect(decoded.httpMethod == "POST")
        #expect(decoded.allHTTPHeaderFields == ["Content-Type": "application/json", "X-Trace": "x"])
        #expect(decoded.httpBody == Data("{}".utf8))
        #expect(decoded.networkServiceType == .video)
        #expect(decoded.allowsCellularAccess == false)
        #expect(decoded.httpShouldHandleCookies == false)
        #expect(decoded.isEqual(original))
    }

    @Test("a body stream is not archived")
    func codingDropsStream() throws {
        let original = NSMutableURLRequest(url: url)
        original.httpBodyStream = InputStream(data: Data("x".utf8))
        let data = try NSKeyedArchiver.archivedData(withRootObject: original, requiringSecureCoding: true)
        let decoded = try #require(try NSKeyedUnarchiver.unarchivedObject(ofClass: NSURLRequest.self, from: data))
        #expect(decoded.httpBodyStream == nil)
        #expect(decoded.httpBody == nil)
        #expect(decoded.url == url)
    }

    @Test("bridging casts between URLRequest and NSURLRequest")
    func bridging() {
        var value = URLRequest(url: url)
        value.httpMethod = "PUT"
        let reference = value._bridgeToObjectiveC()
        #expect(reference.httpMethod == "PUT")
        let back = URLRequest._unconditionallyBridgeFromObjectiveC(reference)
        #expect(back == value)
        let any: Any = reference
        #expect((any as? URLRequest) == value)
    }
}
