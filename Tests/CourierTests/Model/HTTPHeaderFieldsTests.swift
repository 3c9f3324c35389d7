import Foundation
import Testing
@testable import Courier

@Suite("HTTPHeaderFields")
struct HTTPHeaderFieldsTests {

    @Test("look-up ignores case and keeps the first spelling")
    func caseInsensitiveLookup() {
        var fields = HTTPHeaderFields()
        fields.set("text/html", for: "Content-Type")
        #expect(fields.value(for: "content-type") == "text/html")
        #expect(fields.value(for: "CONTENT-TYPE") == "text/html")
        #expect(fields.contains("cOnTeNt-TyPe"))

        fields.set("application/json", for: "CONTENT-TYPE")
        #expect(fields.count == 1)
        #expect(fields.value(for: "Content-Type") == "application/json")
        #expect(fields.dictionary == ["Content-Type": "application/json"])
        #expect(fields.names == ["Content-Type"])
    }

    @Test("set(nil) removes the field and keeps the others reachable")
    func setNilRemoves() {
        var fields = HTTPHeaderFields()
        fields.set("1", for: "A")
        fields.set("2", for: "B")
        fields.set("3", for: "C")
        fields.set(nil, for: "a")
        #expect(fields.count == 2)
        #expect(fields.value(for: "A") == nil)
        #expect(fields.value(for: "b") == "2")
        #expect(fields.value(for: "c") == "3")
        #expect(fields.names == ["B", "C"])

        fields.remove("B")
        #expect(fields.value(for: "C") == "3")
        #expect(fields.names == ["C"])

        // Removing an absent name is harmless.
        fields.set(nil, for: "Z")
        #expect(fields.count == 1)
    }

    @Test("add joins values with a comma, without a space")
    func addJoins() {
        var fields = HTTPHeaderFields()
        fields.add("gzip", for: "Accept-Encoding")
        fields.add("br", for: "accept-encoding")
        fields.add("deflate", for: "ACCEPT-ENCODING")
        #expect(fields.value(for: "Accept-Encoding") == "gzip,br,deflate")
        #expect(fields.names == ["Accept-Encoding"])
    }

    @Test("insertion order is kept for iteration")
    func order() {
        let fields: HTTPHeaderFields = ["Host": "example.com", "Accept": "*/*", "X-Custom": "1", "accept": "text/html"]
        #expect(fields.map(\.name) == ["Host", "Accept", "X-Custom"])
        #expect(fields.value(for: "Accept") == "*/*,text/html")
    }

    @Test("init from a dictionary is deterministic")
    func fromDictionary() {
        let fields = HTTPHeaderFields(["b": "2", "A": "1", "c": "3"])
        #expect(fields.names == ["A", "b", "c"])
        #expect(fields.dictionary == ["b": "2", "A": "1", "c": "3"])
    }

    @Test("equality and hashing ignore name case and order but not values")
    func hashable() {
        var one = HTTPHeaderFields()
        one.set("1", for: "Alpha")
        one.set("2", for: "Beta")
        var two = HTTPHeaderFields()
        two.set("2", for: "BETA")
        two.set("1", for: "alpha")
        #expect(one == two)
        #expect(one.hashValue == two.hashValue)
        #expect(Set([one, two]).count == 1)

        var three = two
        three.set("X", for: "alpha")
        #expect(three != one)
        var four = one
        four.set("3", for: "Gamma")
        #expect(four != one)
    }

    @Test("key(for:) lowercases ASCII and leaves lowercase names untouched")
    func keys() {
        #expect(HTTPHeaderFields.key(for: "Content-Length") == "content-length")
        #expect(HTTPHeaderFields.key(for: "etag") == "etag")
        #expect(HTTPHeaderFields.key(for: "X-ÄBC") == "x-äbc")
        #expect(HTTPHeaderFields.key(for: "") == "")
    }

    /// `value(for:)` and `contains(_:)` compare a name with the stored keys without lowercasing
    /// it first: every spelling finds the field, a name of the same length that differs does not,
    /// and non-ASCII names and collections past the index threshold still go through `key(for:)`.
    @Test("look-ups compare names case-insensitively without building a key")
    func lookUpsFoldCaseInPlace() {
        var fields = HTTPHeaderFields()
        fields.add("1", for: "X-Trace-Id")
        fields.add("2", for: "X-Trace-Ix")
        fields.add("3", for: "Straße")
        for name in ["x-trace-id", "X-TRACE-ID", "x-TrAcE-iD"] {
            #expect(fields.value(for: name) == "1", "\(name)")
            #expect(fields.contains(name), "\(name)")
        }
        #expect(fields.value(for: "X-Trace-Iy") == nil)
        #expect(!fields.contains("X-Trace"))
        #expect(fields.value(for: "STRASSE") == nil)
        #expect(fields.value(for: "straße") == "3")
        #expect(fields.value(for: "STRAßE") == "3")
        var large = HTTPHeaderFields()
        for index in 0..<30 { large.add("\(index)", for: "Name-\(index)") }
        #expect(large.value(for: "NAME-29") == "29")
        #expect(large.value(for: "name-30") == nil)
    }

    @Test("copies are independent values")
    func valueSemantics() {
        var original = HTTPHeaderFields()
        original.set("1", for: "A")
        var copy = original
        copy.set("2", for: "A")
        copy.add("3", for: "B")
        #expect(original.value(for: "A") == "1")
        #expect(original.value(for: "B") == nil)
        #expect(copy.value(for: "A") == "2")
    }
}
