import Foundation
import Testing
@testable import Courier

/// The table of well-known header names the response head parser and the field look-ups use.
@Suite("HTTPWellKnownFieldNames")
struct HTTPWellKnownFieldNamesTests {
    /// The entry found for `name`'s bytes.
    private func entry(_ name: String) -> HTTPWellKnownFieldNames.Entry? {
        var name = name
        return name.withUTF8 { HTTPWellKnownFieldNames.shared.entry(forName: UnsafeRawBufferPointer($0)) }
    }

    @Test("every name is found in any case, with its key and usual spelling")
    func everyNameIsFoundInAnyCase() {
        var mismatches: [String] = []
        for name in HTTPWellKnownFieldNames.names {
            for spelling in [name, name.lowercased(), name.uppercased()] {
                let found = entry(spelling)
                if found?.canonical != name || found?.key != name.lowercased() { mismatches.append(spelling) }
            }
        }
        #expect(mismatches.isEmpty, "not found as expected: \(mismatches)")
    }

    @Test("other names, prefixes and extensions of known names are not found")
    func otherNamesAreNotFound() {
        let others = ["", "X-Custom", "Content-Typ", "Content-Types", "Etag2", "T", "WWW-Authenticat", "Accept-Rangez", "Dat\u{e9}"]
        #expect(others.filter { entry($0) != nil }.isEmpty)
    }

    @Test("a byte that folds onto a known name's byte only by its 0x20 bit does not match")
    func nearMissBytesAreNotFound() {
        // Compared 8 bytes at a time, a hyphen must match exactly (CR is a hyphen without bit 0x20),
        // and only letters fold: "@" and "[" are "`" and "{" without it. Each name differs from a
        // known one in one byte, in the first word, the last word or a word overlapping both.
        let others = [
            "Content\rType", "Content-Lengt\r", "Last-Modified\u{0}", "Cache\rControl", "@ccept-Ranges",
            "Content-Lengt[", "Access-Control-Allow-Credential\u{13}", "X-XSS\rProtection", "Transfer-Encodinf",
        ]
        #expect(others.filter { entry($0) != nil }.isEmpty)
    }

    @Test("the usual spelling is the same through HTTPURLResponse")
    func canonicalNameAgrees() {
        #expect(HTTPURLResponse.canonicalName("etag") == "ETag")
        #expect(HTTPURLResponse.canonicalName("x-xss-protection") == "X-XSS-Protection")
        #expect(HTTPURLResponse.canonicalName("x-unknown-Field") == "x-unknown-Field")
        #expect(HTTPURLResponse.canonicalName(forKey: "content-length") == "Content-Length")
        #expect(HTTPURLResponse.canonicalName(forKey: "x-unknown") == nil)
    }
}
