import Foundation
import Testing
@testable import Courier

/// The FTP directory-listing parsers fed mutated real-server lines (a deterministic generator, so a
/// failure reproduces): no crash, and no entry whose name could leave the listed directory.
@Suite("FTPListingParser fuzzing")
struct FTPListingParserFuzzTests {
    static let seedLines = [
        "drwxr-xr-x    2 1000     1000         4096 Nov 20 09:14 docs",
        "-rw-r--r--   1 ftp      ftp          1204 Nov 20  2024 notes with spaces.txt",
        "lrwxrwxrwx   1 u  g  11 Nov 20 09:14 my link -> target",
        "crw-rw----   1 root     dialout    4,  64 Nov 20 09:14 ttyS0",
        "-rwsr-sr-t+  1 owner         1204 Feb 29 10:00 setid",
        "-rw-r--r--   1 u  g  1 2025-11-20 09:14:03.500000000 +0100 full-iso",
        "-rw-r--r--   1 u  g  1 Nov 20 09:14:03 2025 bsd",
        "total 24",
        "11-20-26  09:14AM       <DIR>          docs",
        "11-20-2026  09:14PM             1204 notes.txt",
        "11-20-26  21:14                 1,204 evening.txt",
        "11-20-26  09:14AM       <JUNCTION>     jct [C:\\x]",
        "type=file;size=1204;modify=20261120091403.123;UNIX.mode=0644; a file; with semis",
        "type=cdir;sizd=4096;modify=20261120091403;UNIX.mode=0755; .",
        "type=OS.unix=slink:/tmp/x;modify=20261120091403; link",
        "modify=20261119170000;perm=adfrw;size=4;type=OS.unix=symlink;UNIX.mode=0777; latest",
    ]

    static let insertions = [
        " ", "  ", "\t", ";", "=", "/", ":", "-", ",", ".", "..", "->", " -> ", " [", "]", "\r", "\n", "\r\n",
        "<DIR>", "AM", "PM", "Nov", "Feb 29", "type=", "size=", "modify=", "unix.mode=", "OS.unix=slink:",
        "99999999999999999999999999999", "9223372036854775808", "-9223372036854775808", "00000000000000",
        "4294967296", "65536", "0o777", "\u{0}", "é", "\u{301}", "👩‍👩‍👧",
    ]

    /// A random input: raw bytes, printable garbage, or valid lines mutated.
    static func fuzzInput(_ random: inout SplitMix64) -> [UInt8] {
        switch Int.random(in: 0..<4, using: &random) {
        case 0:
            return (0..<Int.random(in: 0..<160, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
        case 1:
            let alphabet = Array(" \t\r\n;=:-,./<>0123456789abcdefghijklmnopqrstuvwxyzADMPNovJan+@rwxstST".utf8)
            return (0..<Int.random(in: 0..<160, using: &random)).map { _ in
                alphabet.randomElement(using: &random) ?? 0x20
            }
        default:
            var bytes: [UInt8] = []
            for index in 0..<Int.random(in: 1...3, using: &random) {
                if index > 0 { bytes += Bool.random(using: &random) ? [0x0D, 0x0A] : [0x0A] }
                bytes += Array((seedLines.randomElement(using: &random) ?? "").utf8)
            }
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                mutate(&bytes, &random)
            }
            return bytes
        }
    }

    static func mutate(_ bytes: inout [UInt8], _ random: inout SplitMix64) {
        let position = Int.random(in: 0...bytes.count, using: &random)
        switch Int.random(in: 0..<6, using: &random) {
        case 0 where position < bytes.count: // flip a byte
            bytes[position] = UInt8.random(in: 0...255, using: &random)
        case 1: // truncate
            bytes.removeSubrange(position...)
        case 2: // duplicate a range
            let end = Int.random(in: position...bytes.count, using: &random)
            bytes.insert(contentsOf: bytes[position..<end], at: position)
        case 3: // insert digits
            let digits = (0..<Int.random(in: 1...40, using: &random)).map { _ in UInt8.random(in: 0x30...0x39, using: &random) }
            bytes.insert(contentsOf: digits, at: position)
        case 4: // insert a separator, keyword or huge number
            bytes.insert(contentsOf: Array((insertions.randomElement(using: &random) ?? "").utf8), at: position)
        default: // delete a range
            let end = Int.random(in: position...bytes.count, using: &random)
            bytes.removeSubrange(position..<end)
        }
    }

    @Test func seedLinesAreValid() throws {
        let lists = Self.seedLines.filter { !$0.hasPrefix("type=") && !$0.hasPrefix("modify=") && $0 != "total 24" }
        for line in lists {
            #expect(FTPListingParser.parseLIST(line, now: FTPListingParserTests.now).count == 1, "\(line)")
        }
        for line in Self.seedLines where line.hasPrefix("type=file") || line.hasPrefix("type=OS") || line.hasPrefix("modify=") {
            #expect(FTPListingParser.parseMLSD(line).count == 1, "\(line)")
        }
    }

    @Test func fuzz() throws {
        var random = SplitMix64(seed: 0xC0FF_EE00_2026_1120)
        let nows = [FTPListingParserTests.now, .distantPast, .distantFuture, Date(timeIntervalSince1970: 0),
                    Date(timeIntervalSinceReferenceDate: 1e300), Date(timeIntervalSinceReferenceDate: -1e300)]
        var failures = 0
        var parsed = 0
        for round in 0..<20_000 {
            let input = Data(Self.fuzzInput(&random))
            let now = round % 50 == 0 ? (nows.randomElement(using: &random) ?? FTPListingParserTests.now) : FTPListingParserTests.now
            for mlsd in [false, true] {
                let entries = FTPListingParser.parse(input, mlsd: mlsd, now: now)
                parsed += entries.count
                for entry in entries {
                    let scalars = entry.name.unicodeScalars
                    if entry.name.isEmpty || entry.name == "." || entry.name == ".."
                        || scalars.contains("/") || scalars.contains("\n") {
                        failures += 1
                        if failures <= 10 {
                            Issue.record("round \(round), mlsd \(mlsd): bad name \(entry.name.debugDescription) from \(Array(input))")
                        }
                    }
                }
            }
        }
        #expect(failures == 0)
        // The mutations leave many lines intact: the fuzzing reached the parsers' inner paths.
        #expect(parsed > 1_000)
    }
}
