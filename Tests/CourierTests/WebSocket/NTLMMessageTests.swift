import Foundation
import Testing
@testable import Courier

/// NTLM's messages as Courier writes and reads them, against MS-NLMP §4.2.4's NTLMv2 example
/// (user "User", domain "Domain", password "Password", server challenge 0123456789abcdef, client
/// challenge aa×8, time 0, target info with NetBIOS domain "Domain" and computer "Server").
@Suite("NTLM messages")
struct NTLMMessageTests {
    static func bytes(_ hex: String) -> [UInt8] {
        let digits = Array(hex.filter { !$0.isWhitespace })
        return stride(from: 0, to: digits.count, by: 2).compactMap { UInt8(String(digits[$0...$0 + 1]), radix: 16) }
    }

    static let serverChallenge = bytes("0123456789abcdef")
    static let clientChallenge = [UInt8](repeating: 0xaa, count: 8)
    static let targetInfo = bytes("02000c0044006f006d00610069006e00 01000c005300650072007600650072000000 0000")

    /// §4.2.4.3's CHALLENGE: flags e28a8233 (with Version), target name "Server", the target info.
    static let challenge = bytes("""
        4e544c4d53535000 02000000 0c000c0038000000 33828ae2 0123456789abcdef 0000000000000000
        2400240044000000 0601f0230000000f 530065007200760065007200
        """) + targetInfo

    @Test func md4MatchesTheSpecificationsNTOWFv1() {
        #expect(NTLMCrypto.md4(NTLMWireFormat.utf16LittleEndian("Password")) == Self.bytes("a4f49c406510bdcab6824ee7c30fd852"))
    }

    @Test func ntowfv2MatchesTheSpecification() {
        #expect(NTLMv2Response.ntowfv2(password: "Password", user: "User", domain: "Domain")
                == Self.bytes("0c868a403bfd7a93a3001ef22ef02e3f"))
    }

    @Test func theResponsesMatchTheSpecification() throws {
        let ntowf = try #require(NTLMv2Response.ntowfv2(password: "Password", user: "User", domain: "Domain"))
        let response = try #require(NTLMv2Response(ntowf: ntowf, serverChallenge: Self.serverChallenge,
                                                   clientChallenge: Self.clientChallenge, timestamp: 0, targetInfo: Self.targetInfo))
        let blob = Self.bytes("0101000000000000 0000000000000000 aaaaaaaaaaaaaaaa 00000000") + Self.targetInfo + [0, 0, 0, 0]
        #expect(response.ntResponse == Self.bytes("68cd0ab851e51c96aabc927bebef6a1c") + blob
                && response.lmResponse == Self.bytes("86c35097ac9cec102554764a57cccc19aaaaaaaaaaaaaaaa")
                && response.sessionBaseKey == Self.bytes("8de40ccadbc14a82f15cb0ad0de95ca3"))
    }

    @Test func theSpecificationsChallengeIsRead() throws {
        let message = try #require(NTLMChallengeMessage(bytes: Self.challenge))
        #expect(message.flags.rawValue == 0xe28a_8233 && message.serverChallenge == Self.serverChallenge
                && message.targetInfo == Self.targetInfo && message.timestamp == nil)
    }

    @Test func theAuthenticateMessageCarriesTheSpecificationsResponses() throws {
        let challenge = try #require(NTLMChallengeMessage(bytes: Self.challenge))
        let message = try NTLMAuthenticateMessage.bytes(answering: challenge, name: NTLMUserName("Domain\\User"), password: "Password",
                                                        clientChallenge: Self.clientChallenge, now: 0, workstation: "COMPUTER")
        let lm = NTLMWireFormat.field(message, at: 12).map(Array.init)
        let nt = NTLMWireFormat.field(message, at: 20).map(Array.init)
        let domain = NTLMWireFormat.field(message, at: 28).map(Array.init)
        let user = NTLMWireFormat.field(message, at: 36).map(Array.init)
        let workstation = NTLMWireFormat.field(message, at: 44).map(Array.init)
        let flags = NTLMNegotiateFlags(rawValue: NTLMWireFormat.uint32(message, at: 60) ?? 0)
        #expect(message.starts(with: NTLMWireFormat.signature) && NTLMWireFormat.uint32(message, at: 8) == 3
                && lm == Self.bytes("86c35097ac9cec102554764a57cccc19aaaaaaaaaaaaaaaa")
                && nt?.prefix(16).elementsEqual(Self.bytes("68cd0ab851e51c96aabc927bebef6a1c")) == true
                && domain == NTLMWireFormat.utf16LittleEndian("Domain") && user == NTLMWireFormat.utf16LittleEndian("User")
                && workstation == NTLMWireFormat.utf16LittleEndian("COMPUTER")
                && flags.contains(.unicode) && !flags.contains(.keyExchange) && !flags.contains(.oem))
    }

    @Test func theChallengesTimestampIsUsedAndTheLMResponseIsZero() throws {
        let stamped = Self.bytes("07000800 0102030405060708") + Self.targetInfo
        var bytes = Array(Self.challenge.prefix(Self.challenge.count - Self.targetInfo.count)) + stamped
        bytes[40] = UInt8(stamped.count)
        bytes[42] = UInt8(stamped.count)
        let challenge = try #require(NTLMChallengeMessage(bytes: bytes))
        let message = try NTLMAuthenticateMessage.bytes(answering: challenge, name: NTLMUserName("User"), password: "Password",
                                                        clientChallenge: Self.clientChallenge, now: 99)
        let nt = try #require(NTLMWireFormat.field(message, at: 20).map(Array.init))
        #expect(challenge.timestamp == 0x0807_0605_0403_0201 && Array(nt[24..<32]) == Self.bytes("0102030405060708")
                && NTLMWireFormat.field(message, at: 12).map(Array.init) == [UInt8](repeating: 0, count: 24))
    }

    @Test func theNegotiateMessageAsksForUnicodeNTLMWithoutKeyExchange() {
        let bytes = NTLMNegotiateMessage.bytes
        let flags = NTLMNegotiateFlags(rawValue: NTLMWireFormat.uint32(bytes, at: 12) ?? 0)
        #expect(bytes.count == 32 && bytes.starts(with: NTLMWireFormat.signature) && NTLMWireFormat.uint32(bytes, at: 8) == 1
                && flags.isSuperset(of: [.unicode, .ntlm, .extendedSessionSecurity]) && !flags.contains(.keyExchange))
    }

    @Test func aChallengeWithoutTargetInfoIsRefused() throws {
        var bytes = Array(Self.challenge.prefix(32))
        bytes[12] = 0 // no target name either
        bytes[14] = 0
        bytes[20] = 0x05 // unicode, request target; no target info
        bytes[21] = 0x02
        bytes[22] = 0x08
        bytes[23] = 0x00
        let challenge = try #require(NTLMChallengeMessage(bytes: bytes))
        #expect(throws: NTLMFailure.noTargetInfo) {
            try NTLMAuthenticateMessage.bytes(answering: challenge, name: NTLMUserName("u"), password: "p",
                                              clientChallenge: Self.clientChallenge, now: 0)
        }
    }

    @Test func aChallengeWithoutUnicodeIsRefused() throws {
        var bytes = Self.challenge
        bytes[20] &= 0xfe
        let challenge = try #require(NTLMChallengeMessage(bytes: bytes))
        #expect(throws: NTLMFailure.noUnicode) {
            try NTLMAuthenticateMessage.bytes(answering: challenge, name: NTLMUserName("u"), password: "p",
                                              clientChallenge: Self.clientChallenge, now: 0)
        }
    }

    /// Malformed challenges: each is not read as a challenge.
    @Test(arguments: [
        ("too short", Array(challenge.prefix(31))),
        ("wrong signature", [UInt8](repeating: 0x41, count: 8) + challenge.dropFirst(8)),
        ("wrong message type", Array(challenge.prefix(8)) + [3, 0, 0, 0] + challenge.dropFirst(12)),
        ("target info past the end", Array(challenge.dropLast())),
        ("target info offset past the end", Array(challenge.prefix(44)) + [0xff, 0xff, 0, 0] + challenge.dropFirst(48)),
        ("target name past the end", Array(challenge.prefix(16)) + [0xf0, 0, 0, 0] + challenge.dropFirst(20)),
        ("an AV pair runs past its field", Array(challenge.dropLast(4)) + [0x02, 0x00, 0x10, 0x00]),
        ("no MsvAvEOL", Array(challenge.dropLast(4)) + [0x09, 0x00, 0x00, 0x00]),
        ("an empty timestamp", Array(challenge.dropLast(4)) + [0x07, 0x00, 0x00, 0x00]),
    ] as [(String, [UInt8])])
    func aMalformedChallengeIsNotRead(problem: String, bytes: [UInt8]) {
        #expect(NTLMChallengeMessage(bytes: bytes) == nil, "\(problem)")
    }

    @Test func everyTruncationIsReadSafelyAndNeverAnswered() {
        let answered = (0..<Self.challenge.count).filter { length in
            guard let message = NTLMChallengeMessage(bytes: Array(Self.challenge.prefix(length))) else { return false }
            return (try? NTLMAuthenticateMessage.bytes(answering: message, name: NTLMUserName("u"), password: "p",
                                                       clientChallenge: Self.clientChallenge, now: 0)) != nil
        }
        #expect(answered.isEmpty)
    }

    @Test func aTokenThatIsNotBase64IsAMalformedChallenge() {
        let response = HTTPURLResponse(url: URL(string: "http://127.0.0.1/")!, statusCode: 401, httpVersion: "HTTP/1.1",
                                       headerFields: ["WWW-Authenticate": "NTLM !!notbase64"])!
        let token = WebSocketNTLMAuthorization.challengeToken(in: response) ?? [1]
        #expect(throws: NTLMFailure.malformedChallenge) {
            try WebSocketNTLMAuthorization.answer(to: token, credential: URLCredential(user: "u", password: "p", persistence: .none))
        }
    }

    @Test(arguments: [("EXAMPLE\\alice", "EXAMPLE", "alice"), ("EXAMPLE/alice", "EXAMPLE", "alice"), ("alice", "", "alice"),
                      ("A\\b/c", "A", "b/c")])
    func userNamesSplitAsLibcurlSplitsThem(name: String, domain: String, user: String) {
        let split = NTLMUserName(name)
        #expect(split.domain == domain && split.user == user)
    }
}
