#if COURIER_FUZZ
@testable import Courier
import Foundation

/// `KnownHostsFile` on a known-hosts file's contents, and `KnownHostsHostMatcher` on each entry's
/// host field. Every entry's key names its key type, its line number is a line of the file, and a
/// plain entry written back with `KnownHostsFile.line` parses to the same entry.
enum KnownHostsHarness {
    private static let file = URL(fileURLWithPath: "/fuzz/known_hosts")

    static func run(_ input: Data) {
        let parsed = KnownHostsFile(url: file, contents: input)
        let lineCount = input.count(where: { $0 == 0x0A }) + 1
        let matcher = KnownHostsHostMatcher()
        for entry in parsed.entries {
            fuzzCheck(SSHHostKey.typeName(in: entry.key) == entry.keyType, "key type \(entry.keyType)")
            fuzzCheck((1...lineCount).contains(entry.line), "line \(entry.line) of \(lineCount)")
            _ = matcher.matches(entry.hosts, name: "[host.example.com]:2222")
            guard entry.marker == .none else { continue }
            let line = KnownHostsFile.line(name: entry.hosts, keyType: entry.keyType, key: entry.key)
            let again = KnownHostsFile(url: file, contents: Data(line.utf8)).entries
            var expected = entry
            expected.line = 1
            fuzzCheck(again == [expected], "entry does not survive being written back: \(line.debugDescription)")
        }
    }
}
#endif
