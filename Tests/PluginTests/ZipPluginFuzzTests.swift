import Foundation
import Testing
@testable import Courier

/// The zip plugin runs inside the host, so an archive that made it trap would kill the host (here,
/// the test process: that this test finishes at all is the check). Every archive below, hostile by
/// construction or by seeded random mutation, is loaded through the plugin; each load must end
/// within the time bound, with a body or a `URLError`, and the process must survive them all.
@Suite("Zip plugin with hostile archives", .serialized)
struct ZipPluginFuzzTests {
    /// Deterministic pseudo-random numbers (SplitMix64).
    struct SeededGenerator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var value = state
            value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
            value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
            return value ^ (value >> 31)
        }
    }

    static let contents = Data("File A, stored in the archive.\n".utf8)

    /// A small valid archive: a file, a directory with a file, and a symbolic link.
    static func base(central: ZipArchiveWriter.CentralFields = .init(), name: String = "a.txt") -> ZipArchiveWriter {
        var writer = ZipArchiveWriter()
        writer.add(name, contents, central: central)
        writer.add("docs/")
        writer.add("docs/b.txt", Data("B\n".utf8))
        writer.add("link", Data("a.txt".utf8), mode: 0o120777)
        return writer
    }

    /// Archives built hostile on purpose, each with a label.
    static func targetedArchives() -> [(String, Data)] {
        typealias Fields = ZipArchiveWriter.CentralFields
        let huge: [UInt64] = [1 << 63, UInt64.max, UInt64.max - 29, UInt64(Int64.max)]
        var archives: [(String, Data)] = []
        for value in huge {
            archives.append(("zip64 uncompressed size \(value)", base(central: .zip64(uncompressed: value)).data))
            archives.append(("zip64 compressed size \(value)", base(central: .zip64(compressed: value)).data))
            archives.append(("zip64 offset \(value)", base(central: .zip64(offset: value)).data))
            var deflated = Fields.zip64(uncompressed: value, compressed: value)
            deflated.method = 8
            archives.append(("deflated zip64 sizes \(value)", base(central: deflated).data))
            var described = Fields.zip64(uncompressed: value, compressed: value)
            described.flags = 0x0808
            archives.append(("data descriptor with zip64 sizes \(value)", base(central: described).data))
            archives.append(("zip64 end: directory at \(value)", base().data(zip64End: (count: 4, offset: value))))
            archives.append(("zip64 end: \(value) entries", base().data(zip64End: (count: value, offset: 0))))
        }
        archives.append(("offset past the end", base(central: Fields(offset: 0xFFFF_FFF0)).data))
        archives.append(("stored size past the end", base(central: Fields(compressedSize: 1 << 30, uncompressedSize: 1 << 30)).data))
        archives.append(("garbage deflate", base(central: Fields(method: 8)).data))
        archives.append(("unknown method", base(central: Fields(method: 99)).data))
        archives.append(("encrypted", base(central: Fields(flags: 0x0801)).data))
        var overlong = Fields()
        overlong.extra = Data([0x01, 0x00, 0xFF, 0xFF, 0, 0, 0, 0])
        archives.append(("extra field longer than its record", base(central: overlong).data))
        var negative = Fields(uncompressedSize: .max)
        negative.extra = Data([0x01, 0x00, 0x08, 0x00, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF])
        archives.append(("zip64 size -1", base(central: negative).data))
        archives.append(("65535 entries claimed", base().data(entryCount: .max)))
        archives.append(("directory offset past the end", base().data(directoryOffset: .max)))
        for name in ["../../etc/passwd", "a\0b.txt", "/absolute.txt", "..", "", "docs/../../x"] {
            archives.append(("name \(name.debugDescription)", base(name: name).data))
        }
        let intact = base().data
        for length in stride(from: 0, to: intact.count, by: 7) {
            archives.append(("truncated to \(length) bytes", intact.prefix(length)))
        }
        if let deflated = try? Data(contentsOf: fixture) {
            for length in stride(from: 22, to: deflated.count, by: max(1, deflated.count / 40)) {
                // The data cut out of the middle: the end record survives, the entries do not.
                archives.append(("deflated without bytes \(length)…", deflated.prefix(length) + deflated.suffix(22)))
            }
        }
        return archives
    }

    static var fixture: URL { PluginProducts.repositoryRoot.appendingPathComponent("Tests/PluginTests/Fixtures/deflated.zip") }

    /// `count` archives mutated from the valid ones with a fixed seed.
    static func randomArchives(count: Int) -> [(String, Data)] {
        var random = SeededGenerator(state: 0x5EED_C0DE)
        let bases = [base().data] + ((try? Data(contentsOf: fixture)).map { [$0] } ?? [])
        let interesting: [UInt64] = [0, 1, 0x7F, 0x80, 0xFF, 0x7FFF, 0xFFFF, 0x7FFF_FFFF, 0xFFFF_FFFF, 1 << 63, .max]
        return (0..<count).map { index in
            var bytes = [UInt8](bases[index % bases.count])
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                // Mostly near the end, where the central directory and end records are.
                let tail = bytes.count * 2 / 5
                let position = Bool.random(using: &random) ? Int.random(in: 0..<bytes.count, using: &random)
                                                          : bytes.count - 1 - Int.random(in: 0..<max(1, tail), using: &random)
                switch Int.random(in: 0..<3, using: &random) {
                case 0:
                    bytes[position] = UInt8.random(in: 0...255, using: &random)
                case 1:
                    var value = interesting.randomElement(using: &random) ?? 0
                    for offset in position..<min(bytes.count, position + [2, 4, 8].randomElement(using: &random)!) {
                        bytes[offset] = UInt8(truncatingIfNeeded: value)
                        value >>= 8
                    }
                default:
                    bytes.removeLast(Int.random(in: 0...min(64, bytes.count - 1), using: &random))
                }
                if bytes.isEmpty { break }
            }
            return ("random mutation \(index)", Data(bytes))
        }
    }

    @Test func everyHostileArchiveLoadsOrFailsWithAURLError() async throws {
        try InstalledPlugins.install()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-zip-fuzz-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForResource = 10
        let session = URLSession(configuration: configuration)
        defer { session.invalidateAndCancel() }
        let started = Date()
        let archives = Self.targetedArchives() + Self.randomArchives(count: 300)
        for (index, (label, bytes)) in archives.enumerated() {
            let file = directory.appendingPathComponent("\(index).zip")
            try bytes.write(to: file)
            for entry in ["", "a.txt", "docs/", "link", "docs/readme.txt"] {
                var components = URLComponents()
                components.scheme = "zip"
                components.host = ""
                components.path = file.path + "!/" + entry
                let url = try #require(components.url)
                let result = await fetch(url, session: session)
                if let error = result.error {
                    #expect(result.urlError != nil, "\(label), \(entry): not a URLError: \(error)")
                    #expect(result.urlError?.code != .timedOut, "\(label), \(entry): the load did not end")
                }
            }
        }
        #expect(Date().timeIntervalSince(started) < 300)
    }
}
