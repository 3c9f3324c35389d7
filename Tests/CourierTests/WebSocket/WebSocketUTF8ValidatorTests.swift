import Foundation
import Testing
@testable import Courier

/// `WebSocketUTF8Validator`: well-formed UTF-8 per Unicode's table 3-7, fed whole or cut anywhere.
@Suite("WebSocket UTF-8 validator")
struct WebSocketUTF8ValidatorTests {
    /// Whether `bytes`, fed in pieces cut at `cuts`, are a complete valid message.
    private func isValid(_ bytes: [UInt8], cuttingAt cuts: [Int] = []) -> Bool {
        var validator = WebSocketUTF8Validator()
        var from = 0
        for cut in cuts + [bytes.count] {
            guard bytes[from..<cut].withUnsafeBytes({ validator.validate($0) }) else { return false }
            from = cut
        }
        return validator.isAtCodePointBoundary
    }

    private static let valid: [[UInt8]] = [
        [],
        Array("plain ASCII, long enough to take the eight-byte path".utf8),
        Array("κόσμε".utf8),
        Array("Hello-µ@ßöäüàá-UTF-8!!".utf8),
        [0xC2, 0x80], [0xDF, 0xBF],                         // U+0080, U+07FF
        [0xE0, 0xA0, 0x80], [0xED, 0x9F, 0xBF],             // U+0800, U+D7FF
        [0xEE, 0x80, 0x80], [0xEF, 0xBF, 0xBF],             // U+E000, U+FFFF
        [0xF0, 0x90, 0x80, 0x80], [0xF4, 0x8F, 0xBF, 0xBF], // U+10000, U+10FFFF
        [0x00],
    ]

    private static let invalid: [[UInt8]] = [
        [0x80], [0xBF],                                     // a lone continuation byte
        [0xC0, 0x80], [0xC1, 0xBF],                         // overlong two-byte forms
        [0xE0, 0x80, 0x80], [0xE0, 0x9F, 0xBF],             // overlong three-byte forms
        [0xF0, 0x80, 0x80, 0x80], [0xF0, 0x8F, 0xBF, 0xBF], // overlong four-byte forms
        [0xED, 0xA0, 0x80], [0xED, 0xBF, 0xBF],             // surrogates
        [0xF4, 0x90, 0x80, 0x80], [0xF5, 0x80, 0x80, 0x80], // above U+10FFFF
        [0xFE], [0xFF],
        [0xC2], [0xE2, 0x82], [0xF0, 0x9F, 0x98],           // truncated at the end
        [0xC2, 0x41], [0xE2, 0x28, 0xA1],                   // a sequence cut short by another byte
        Array("κόσμε".utf8) + [0xED, 0xA0, 0x80] + Array("edited".utf8),
    ]

    @Test(arguments: valid)
    func wellFormedUTF8IsAccepted(bytes: [UInt8]) {
        #expect(isValid(bytes))
    }

    @Test(arguments: invalid)
    func malformedUTF8IsRefused(bytes: [UInt8]) {
        #expect(!isValid(bytes))
    }

    @Test func everySplitOfValidTextIsAccepted() {
        let text = Array("a€b😀c\u{10FFFF}d".utf8)
        #expect((0...text.count).allSatisfy { isValid(text, cuttingAt: [$0]) } && isValid(text, cuttingAt: Array(1..<text.count)))
    }

    @Test func everySplitOfInvalidTextIsRefused() {
        let text = Array("ok €".utf8) + [0xF4, 0x90, 0x80, 0x80] + Array("after".utf8)
        #expect((0...text.count).allSatisfy { !isValid(text, cuttingAt: [$0]) })
    }

    /// F4 90 can begin no valid sequence: the second byte is refused before the rest arrives.
    @Test func anImpossibleSequenceFailsAtItsFirstBadByte() {
        var validator = WebSocketUTF8Validator()
        let first = [UInt8(0xF4)].withUnsafeBytes { validator.validate($0) }
        let second = [UInt8(0x90)].withUnsafeBytes { validator.validate($0) }
        #expect(first && !second)
    }

    @Test func agreesWithTheStandardLibraryOnEveryTwoBytePair() {
        var disagreements = 0
        for first in 0...255 {
            for second in 0...255 {
                let bytes = [UInt8(first), UInt8(second)]
                if isValid(bytes) != (String(validating: bytes, as: UTF8.self) != nil) { disagreements += 1 }
            }
        }
        #expect(disagreements == 0)
    }
}
