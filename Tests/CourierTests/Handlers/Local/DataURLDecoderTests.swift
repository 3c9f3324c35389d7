import Foundation
import Testing
@testable import Courier

/// The pure `data:` URL decoder (RFC 2397), without a session.
@Suite("DataURLDecoder")
struct DataURLDecoderTests {

    /// The decoded value, or a recorded issue naming the failure.
    private func decoded(_ string: String, sourceLocation: SourceLocation = #_sourceLocation) -> DataURLDecoder.Decoded? {
        switch DataURLDecoder.decode(string) {
        case .success(let value):
            return value
        case .failure(let failure):
            Issue.record("\(string.prefix(80)) failed with \(failure)", sourceLocation: sourceLocation)
            return nil
        }
    }

    private func failure(_ string: String) -> DataURLDecoder.Failure? {
        if case .failure(let failure) = DataURLDecoder.decode(string) { return failure }
        return nil
    }

    private func text(_ string: String) -> String? {
        decoded(string).map { String(decoding: $0.data, as: UTF8.self) }
    }

    // MARK: - Media type and parameters

    @Test func mediaTypeAndCharset() throws {
        let html = try #require(decoded("data:text/html;charset=utf-8,%3Cp%3Ehi%3C%2Fp%3E"))
        #expect(html.mimeType == "text/html")
        #expect(html.textEncodingName == "utf-8")
        #expect(String(decoding: html.data, as: UTF8.self) == "<p>hi</p>")

        // Type and parameter names are case-insensitive; the type is reported lowercased, the
        // charset value as given.
        let mixed = try #require(decoded("data:Text/HTML;Charset=ISO-8859-1,x"))
        #expect(mixed.mimeType == "text/html")
        #expect(mixed.textEncodingName == "ISO-8859-1")

        // Other parameters are accepted and do not end up in the MIME type.
        let withOthers = try #require(decoded("data:application/json;foo=bar;charset=utf-8;name=x.json,%7B%7D"))
        #expect(withOthers.mimeType == "application/json")
        #expect(withOthers.textEncodingName == "utf-8")
        #expect(withOthers.data == Data("{}".utf8))

        // Structured-syntax and vendor subtypes are tokens too.
        #expect(decoded("data:application/vnd.api+json,x")?.mimeType == "application/vnd.api+json")
        #expect(decoded("data:image/svg+xml;base64,PHN2Zy8+")?.mimeType == "image/svg+xml")
        #expect(decoded("data:image/svg+xml;base64,PHN2Zy8+")?.data == Data("<svg/>".utf8))
    }

    @Test func defaults() throws {
        // No media type at all: text/plain;charset=US-ASCII (RFC 2397 §2).
        let bare = try #require(decoded("data:,x"))
        #expect(bare.mimeType == "text/plain")
        #expect(bare.textEncodingName == "US-ASCII")
        #expect(bare.data == Data("x".utf8))

        // Only a charset: the type defaults to text/plain, the charset is the one given.
        let charsetOnly = try #require(decoded("data:;charset=utf-8,x"))
        #expect(charsetOnly.mimeType == "text/plain")
        #expect(charsetOnly.textEncodingName == "utf-8")

        // Only base64: still the defaults.
        let base64Only = try #require(decoded("data:;base64,eA=="))
        #expect(base64Only.mimeType == "text/plain")
        #expect(base64Only.textEncodingName == "US-ASCII")
        #expect(base64Only.data == Data("x".utf8))

        // A media type without a charset has no text encoding name.
        #expect(try #require(decoded("data:text/html,x")).textEncodingName == nil)
        #expect(try #require(decoded("data:text/plain,x")).textEncodingName == nil)
        #expect(try #require(decoded("data:application/octet-stream;base64,AAE=")).textEncodingName == nil)
        // An empty charset value is no charset.
        #expect(try #require(decoded("data:text/plain;charset=,x")).textEncodingName == nil)
    }

    @Test func quotedParameterValues() throws {
        #expect(decoded("data:text/plain;charset=\"utf-8\",x")?.textEncodingName == "utf-8")
        // As a URL would carry it, with the quotes percent-encoded.
        #expect(decoded("data:text/plain;charset=%22utf-8%22,x")?.textEncodingName == "utf-8")
        #expect(decoded("data:;charset=\"UTF-16LE\";base64,eAA=")?.textEncodingName == "UTF-16LE")
        #expect(decoded("data:;charset=\"UTF-16LE\";base64,eAA=")?.data == Data([0x78, 0x00]))
        // White space around names and values is ignored.
        #expect(decoded("data:text/plain ; charset = utf-8 ,x")?.textEncodingName == "utf-8")
    }

    /// RFC 2397: `dataurl := "data:" [ mediatype ] [ ";base64" ] "," data`. Without its ";",
    /// "base64" is a media type (and not a valid one), so the data is not base64-decoded.
    @Test func base64MarkerNeedsItsSemicolon() {
        let result = DataURLDecoder.decode("data:base64,SGVsbG8=")
        #expect(result == .failure(.invalidMediaType("base64")), "\(result)")
        #expect(DataURLDecoder.decode("data:BASE64,SGVsbG8=") == .failure(.invalidMediaType("BASE64")))
        // "base64" somewhere other than last is an ordinary (ignored) parameter.
        #expect(text("data:;base64;charset=utf-8,SGVsbG8=") == "SGVsbG8=")
        // "base64=…" is a parameter, not the marker.
        #expect(text("data:;base64=yes,SGVsbG8=") == "SGVsbG8=")
    }

    @Test func schemeAndBase64MarkerAreCaseInsensitive() throws {
        #expect(text("DATA:,x") == "x")
        #expect(text("Data:text/plain,x") == "x")
        #expect(text("data:;BASE64,SGVsbG8=") == "Hello")
        #expect(text("DaTa:text/plain;Base64,SGVsbG8=") == "Hello")
        #expect(text("data:text/plain;charset=utf-8;bAsE64,SGVsbG8=") == "Hello")
    }

    // MARK: - base64

    @Test(arguments: [
        ("data:;base64,SGVsbG8=", Array("Hello".utf8)),            // padded
        ("data:;base64,SGVsbG8", Array("Hello".utf8)),             // one '=' missing
        ("data:;base64,SGVsbA", Array("Hell".utf8)),               // two '=' missing
        ("data:;base64,SGVsbA==", Array("Hell".utf8)),
        ("data:;base64,SGVs", Array("Hel".utf8)),                  // no padding needed
        ("data:;base64,SGVs%20bG8%3D", Array("Hello".utf8)),       // percent-encoded space and '='
        ("data:;base64,%53%47Vsb%47%38%3d", Array("Hello".utf8)),  // percent-encoded alphabet characters
        ("data:;base64,SGVs bG8=", Array("Hello".utf8)),           // raw space
        ("data:;base64,SGVs\nbG8=", Array("Hello".utf8)),          // line feed
        ("data:;base64,SG\r\nVs\tbG8=", Array("Hello".utf8)),      // CRLF and tab
        ("data:;base64,%0ASGVs%0D%0AbG8%3D%0A", Array("Hello".utf8)), // percent-encoded line breaks
        ("data:;base64,+/8=", [0xFB, 0xFF]),                       // '+' and '/'
        ("data:;base64,%2B%2F8%3D", [0xFB, 0xFF]),                 // the same, percent-encoded
    ] as [(String, [UInt8])])
    func base64Variants(url: String, expected: [UInt8]) throws {
        let value = try #require(decoded(url))
        #expect(value.data == Data(expected))
        #expect(value.mimeType == "text/plain")
    }

    // MARK: - Percent-encoding

    @Test func percentEncodedBytes() throws {
        #expect(decoded("data:,%00")?.data == Data([0x00]))
        #expect(decoded("data:,a%00b")?.data == Data([0x61, 0x00, 0x62]))
        #expect(decoded("data:,%FF%fe%7f%80")?.data == Data([0xFF, 0xFE, 0x7F, 0x80]))
        #expect(text("data:;charset=utf-8,caf%C3%A9") == "café")
        #expect(text("data:;charset=utf-8,caf%c3%a9") == "café")
        #expect(text("data:,%F0%9F%93%A6%20box") == "📦 box")
        // Raw (not percent-encoded) UTF-8 is passed through as its bytes.
        #expect(decoded("data:,café")?.data == Data("café".utf8))
        // '+' is not a space in a data: URL.
        #expect(text("data:,a+b") == "a+b")
        // An escaped comma, semicolon or hash is data.
        #expect(text("data:,a%2Cb%3Bc%23d") == "a,b;c#d")
        // Commas after the first belong to the data.
        #expect(text("data:,a,b,,c") == "a,b,,c")
        // '%' followed by "25" is a literal percent sign.
        #expect(text("data:,100%25") == "100%")
    }

    @Test func emptyData() throws {
        for url in ["data:,", "data:;base64,", "data:text/plain;charset=utf-8,", "data:,#fragment", "data:;base64,#x"] {
            let value = try #require(decoded(url))
            #expect(value.data.isEmpty, "\(url)")
        }
    }

    @Test func fragmentIsNotData() throws {
        #expect(text("data:,hello#world") == "hello")
        #expect(text("data:;base64,SGVsbG8=#frag") == "Hello")
        #expect(text("data:,a#b#c") == "a")
        #expect(text("data:,a%23b#c") == "a#b")
    }

    /// A "#" starts the fragment wherever it is (RFC 3986 §3.5): a comma after it does not end
    /// the header.
    @Test func fragmentBeforeTheComma() {
        #expect(failure("data:text/plain#x,y") == .missingComma)
        #expect(failure("data:;base64#,SGVsbG8=") == .missingComma)
        #expect(failure("data:#,x") == .missingComma)
    }

    @Test func binaryRoundTripOfAllByteValues() throws {
        let all = Data((0...255).map { UInt8($0) })
        // base64, padded and unpadded (256 bytes need one '=').
        let base64 = all.base64EncodedString()
        #expect(decoded("data:application/octet-stream;base64," + base64)?.data == all)
        #expect(decoded("data:application/octet-stream;base64," + base64.replacingOccurrences(of: "=", with: ""))?.data == all)
        // base64 with line breaks every 76 characters, as MIME writes it.
        let wrapped = all.base64EncodedString(options: [.lineLength76Characters, .endLineWithCarriageReturn, .endLineWithLineFeed])
        #expect(wrapped.contains("\r\n"))
        #expect(decoded("data:;base64," + wrapped)?.data == all)
        // Percent-encoding every byte, and only the bytes that need it.
        #expect(decoded("data:application/octet-stream," + LocalTestSupport.percentEncodeAll(all))?.data == all)
        #expect(decoded("data:application/octet-stream," + LocalTestSupport.percentEncodeReserved(all))?.data == all)
        // Lowercase hex digits too.
        #expect(decoded("data:," + LocalTestSupport.percentEncodeAll(all).lowercased())?.data == all)
    }

    @Test func decodedSizeIsTheDataLength() throws {
        #expect(decoded("data:;base64,AAAAAAAA")?.data.count == 6)
        #expect(decoded("data:,%00%00%00abc")?.data.count == 6)
    }

    // MARK: - Malformed

    @Test func missingComma() {
        #expect(failure("data:") == .missingComma)
        #expect(failure("data:text/plain") == .missingComma)
        #expect(failure("data:text/plain;base64") == .missingComma)
        #expect(failure("data:;base64;SGVsbG8=") == .missingComma)
        #expect(failure("data:text/plain%2Cx") == .missingComma)
    }

    @Test func notADataURL() {
        #expect(failure("http://example.com/,x") == .notADataURL)
        #expect(failure("dat:,x") == .notADataURL)
        #expect(failure("") == .notADataURL)
        #expect(failure("data") == .notADataURL)
    }

    @Test(arguments: [
        "data:;base64,A",             // a lone 6-bit group cannot encode a byte
        "data:;base64,SGVsbG8=A",     // one character after the padding
        "data:;base64,SGV$bG8=",      // '$' is not in the alphabet
        "data:;base64,SGVs*bG8=",
        "data:;base64,SGVs%00bG8=",   // a NUL byte after percent-decoding
        "data:;base64,SGVsbG8-",      // the URL-safe alphabet is not base64
        "data:;base64,SGVsbG8_",
        "data:;base64,%FF%FE",
    ])
    func badBase64(url: String) {
        #expect(failure(url) == .invalidBase64, "\(url)")
    }

    @Test(arguments: ["data:,%zz", "data:,%4", "data:,%", "data:,abc%", "data:,a%4g", "data:,%%41", "data:;base64,SGVsbG8%3",
                      "data:,%G0"])
    func badPercentEscapes(url: String) {
        #expect(failure(url) == .invalidPercentEscape, "\(url)")
    }

    @Test(arguments: ["data:text,x", "data:text/,x", "data:/plain,x", "data:te xt/plain,x", "data:text/pl@in,x",
                      "data:text/plain/x,x", "data:text(/plain,x", "data:\"text/plain\",x", "data:text/pl%C3%A4in,x"])
    func badMediaTypes(url: String) {
        guard case .invalidMediaType? = failure(url) else {
            Issue.record("\(url) gave \(DataURLDecoder.decode(url)), expected .invalidMediaType")
            return
        }
    }

    // MARK: - Robustness

    /// 2,000 random strings after `data:` never crash and always give a value or a `Failure`, and
    /// a success always has a well-formed lowercased MIME type.
    @Test func randomInputNeverCrashes() {
        var generator = SplitMix64(seed: 0x00C0_FFEE_2397)
        let alphabet = Array("abcXYZ019+/=;,%\"# \t\n/.-_base64charsetBASE64text/plainé".unicodeScalars)
        var successes = 0
        var failures = 0
        for round in 0..<2_000 {
            var tail = ""
            let length = Int.random(in: 0...64, using: &generator)
            switch round % 4 {
            case 0: // random bytes, percent-encoded, sometimes cut short inside an escape
                let bytes = Data((0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) })
                let encoded = Bool.random(using: &generator)
                    ? LocalTestSupport.percentEncodeAll(bytes) : LocalTestSupport.percentEncodeReserved(bytes)
                let cut = !encoded.isEmpty && Int.random(in: 0..<5, using: &generator) == 0
                tail = "application/octet-stream," + (cut ? String(encoded.dropLast()) : encoded)
                if !cut {
                    // Well-formed escapes must give back exactly the bytes.
                    if case .success(let value) = DataURLDecoder.decode("data:" + tail) {
                        #expect(value.data == bytes, "\(tail)")
                    } else {
                        Issue.record("data:\(tail) did not decode")
                    }
                }
            case 1: // random ASCII from a hostile alphabet
                for _ in 0..<length { tail.unicodeScalars.append(alphabet.randomElement(using: &generator)!) }
            case 2: // a plausible header, then hostile data
                tail = ["", "text/plain", ";base64", "text/plain;base64", ";charset=utf-8;base64", "a/b;x=\"y\""]
                    .randomElement(using: &generator)! + ","
                for _ in 0..<length { tail.unicodeScalars.append(alphabet.randomElement(using: &generator)!) }
            default: // random printable ASCII, sometimes with stray '%'
                for _ in 0..<length {
                    tail.unicodeScalars.append(Unicode.Scalar(UInt8.random(in: 0x20...0x7E, using: &generator)))
                }
            }
            switch DataURLDecoder.decode("data:" + tail) {
            case .success(let value):
                successes += 1
                #expect(value.mimeType == value.mimeType.lowercased(), "\(tail)")
                #expect(value.mimeType.split(separator: "/", omittingEmptySubsequences: false).count == 2, "\(tail)")
            case .failure(let failure):
                failures += 1
                if !tail.contains(",") { #expect(failure == .missingComma, "\(tail)") }
                #expect(failure != .notADataURL, "\(tail)")
            }
        }
        #expect(successes + failures == 2_000)
        #expect(successes > 100)
        #expect(failures > 100)
    }
}

// MARK: - Multi-megabyte URLs

extension LocalHandlerHeavyTests {
    @Suite("DataURLDecoder (large)")
    struct DataURLDecoderLargeTests {

        @Test func eightMebibyteBase64() throws {
            let payload = try LocalTestSupport.randomBytes(8 << 20)
            let url = "data:application/octet-stream;base64," + payload.base64EncodedString()
            guard case .success(let value) = DataURLDecoder.decode(url) else {
                Issue.record("8 MiB base64 data: URL did not decode")
                return
            }
            #expect(value.data.count == payload.count)
            #expect(value.data == payload)
        }

        @Test func eightMebibytePercentEncoded() throws {
            let payload = try LocalTestSupport.randomBytes(8 << 20)
            let url = "data:application/octet-stream," + LocalTestSupport.percentEncodeReserved(payload)
            guard case .success(let value) = DataURLDecoder.decode(url) else {
                Issue.record("8 MiB percent-encoded data: URL did not decode")
                return
            }
            #expect(value.data.count == payload.count)
            #expect(value.data == payload)
        }

        /// The best of `runs` decode times of `url`, after checking it decodes to `size` bytes.
        /// The decoder's best time for `url` over `runs` runs, in CPU seconds of this thread (not wall
        /// time: on a loaded machine, time spent waiting for a core would count otherwise).
        private func decodeTime(_ url: String, size: Int, runs: Int) -> Double {
            var best = Double.infinity
            for _ in 0..<runs {
                var count = -1
                let start = threadCPUSeconds()
                if case .success(let value) = DataURLDecoder.decode(url) { count = value.data.count }
                let elapsed = threadCPUSeconds() - start
                #expect(count == size)
                best = min(best, elapsed)
            }
            return best
        }

        /// CPU time this thread has used, in seconds.
        private func threadCPUSeconds() -> Double {
            var now = timespec()
            clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
            return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
        }

        private func ratio(_ large: Double, _ small: Double) -> Double {
            large / max(small, 1e-6)
        }

        /// Four times the size must take about four times as long, not sixteen: the bound (8) is
        /// loose so that only super-linear behaviour fails it. Times are the thread's CPU time, so a
        /// busy machine does not count; the small URL is timed twice and the best run counts, so a
        /// cold first run cannot hide a super-linear large one.
        @Test func base64DecodeTimeIsLinear() throws {
            let small = try LocalTestSupport.randomBytes(4 << 20)
            let large = try LocalTestSupport.randomBytes(16 << 20)
            let smallURL = "data:;base64," + small.base64EncodedString(options: .lineLength76Characters)
            let largeURL = "data:;base64," + large.base64EncodedString(options: .lineLength76Characters)
            let smallTime = decodeTime(smallURL, size: small.count, runs: 2)
            let largeTime = decodeTime(largeURL, size: large.count, runs: 1)
            let factor = ratio(largeTime, smallTime)
            #expect(factor < 8, "4 MiB: \(smallTime), 16 MiB: \(largeTime), ratio \(factor)")
        }

        @Test func percentDecodeTimeIsLinear() throws {
            let small = try LocalTestSupport.randomBytes(4 << 20)
            let large = try LocalTestSupport.randomBytes(16 << 20)
            let smallURL = "data:application/octet-stream," + LocalTestSupport.percentEncodeReserved(small)
            let largeURL = "data:application/octet-stream," + LocalTestSupport.percentEncodeReserved(large)
            let smallTime = decodeTime(smallURL, size: small.count, runs: 2)
            let largeTime = decodeTime(largeURL, size: large.count, runs: 1)
            let factor = ratio(largeTime, smallTime)
            #expect(factor < 8, "4 MiB: \(smallTime), 16 MiB: \(largeTime), ratio \(factor)")
        }
    }
}
