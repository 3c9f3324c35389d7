#if COURIER_FUZZ
@testable import Courier
import Foundation

/// What a server sends in the WebSocket handshake's NTLM exchange: the CHALLENGE message
/// (`NTLMChallengeMessage`, answered with `NTLMAuthenticateMessage`) and, from the same input, the
/// chunked body of its 401 (`HTTPResponseBodySkipper`), whole and cut in two where the first byte
/// says. A CHALLENGE that is read has an 8-byte challenge, and its answer (if any) is an
/// AUTHENTICATE whose fields all lie inside it; the body skipper reaches the same outcome whole or cut.
enum NTLMChallengeHarness {
    static func run(_ input: Data) {
        let bytes = Array(input)
        if let challenge = NTLMChallengeMessage(bytes: bytes) {
            fuzzCheck(challenge.serverChallenge.count == 8, "a challenge of \(challenge.serverChallenge.count) bytes")
            if let message = try? NTLMAuthenticateMessage.bytes(answering: challenge, name: NTLMUserName("D\\u"), password: "p",
                                                                clientChallenge: [UInt8](repeating: 1, count: 8), now: 0) {
                fuzzCheck(message.starts(with: NTLMWireFormat.signature)
                          && stride(from: 12, through: 52, by: 8).allSatisfy { NTLMWireFormat.field(message, at: $0) != nil },
                          "an AUTHENTICATE with a field outside it")
            }
        }
        let whole = skip([bytes[...]])
        let cut = bytes.isEmpty ? 0 : Int(bytes[0]) % (bytes.count + 1)
        fuzzCheck(skip([bytes[..<cut], bytes[cut...]]) == whole, "a chunked body read differently when cut at \(cut)")
    }

    /// The outcome of `parts` fed one after the other to a chunked body's skipper; bytes after the
    /// body count as the rest, whichever part they were in.
    private static func skip(_ parts: [ArraySlice<UInt8>]) -> HTTPResponseBodySkipper.Outcome {
        var skipper = HTTPResponseBodySkipper(.chunked, limit: 1 << 16)
        for (index, part) in parts.enumerated() {
            let outcome = Array(part).withUnsafeBytes { skipper.append($0) }
            switch outcome {
            case .needMore:
                continue
            case .done(let rest):
                return .done(rest: rest + parts[(index + 1)...].reduce(Data()) { $0 + Data($1) })
            case .malformed:
                return outcome
            }
        }
        return .needMore
    }
}
#endif
