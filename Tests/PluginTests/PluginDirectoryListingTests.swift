import Courier
import CourierPluginKit
import Foundation
import Testing

/// CourierPluginKit's listing encoder writes, byte for byte, what Courier's `URLDirectoryListing`
/// writes: a plugin's listing is the same contract as a built-in handler's.
@Suite("Plugin directory listings")
struct PluginDirectoryListingTests {
    /// The same entries in the host's and in the kit's type.
    private static let entries: [URLDirectoryEntry] = [
        URLDirectoryEntry(name: "notes.txt", type: .file, size: 1204,
                          modificationDate: Date(timeIntervalSince1970: 1_763_800_000), permissions: 0o644),
        URLDirectoryEntry(name: "docs", type: .directory,
                          modificationDate: Date(timeIntervalSince1970: 1_763_800_000.25), permissions: 0o755),
        URLDirectoryEntry(name: "latest", type: .symbolicLink, size: 11,
                          modificationDate: Date(timeIntervalSince1970: 1_763_800_000.5),
                          symbolicLinkDestination: "../docs/v2/"),
        URLDirectoryEntry(name: "absolute", type: .symbolicLink, symbolicLinkDestination: "/usr/share/doc/courier"),
        URLDirectoryEntry(name: #"say "hi" \ 'bye'"#, type: .file, size: 0),
        URLDirectoryEntry(name: "tab\tnew\nline\u{01}", type: .other),
        URLDirectoryEntry(name: "café — 日本語 📦", type: .file, size: Int64.max,
                          modificationDate: Date(timeIntervalSince1970: 0.125), permissions: 0o7777),
        URLDirectoryEntry(name: "e\u{301}", type: .directory, modificationDate: Date(timeIntervalSince1970: -86_400.75)),
        URLDirectoryEntry(name: "x", type: .file),
    ]

    private static func kitEntry(_ entry: URLDirectoryEntry) throws -> PluginDirectoryEntry {
        let type = try #require(PluginDirectoryEntry.EntryType(rawValue: entry.type.rawValue))
        return PluginDirectoryEntry(name: entry.name, type: type, size: entry.size, modificationDate: entry.modificationDate,
                                    permissions: entry.permissions, symbolicLinkDestination: entry.symbolicLinkDestination)
    }

    @Test func theKitWritesTheSameBytesAsCourier() throws {
        for entry in Self.entries {
            let kit = PluginDirectoryListing.encodeLine(try Self.kitEntry(entry))
            let courier = URLDirectoryListing.encodeLine(entry)
            #expect(kit == courier, "\(String(decoding: kit, as: UTF8.self)) != \(String(decoding: courier, as: UTF8.self))")
        }
        let body = PluginDirectoryListing.encode(try Self.entries.map(Self.kitEntry))
        #expect(body == URLDirectoryListing.encode(Self.entries))
        #expect(try URLDirectoryListing.decode(body) == Self.entries)
        #expect(PluginDirectoryListing.encode([]).isEmpty)
    }

    @Test func linesHaveTheDocumentedShape() throws {
        let line = { (entry: PluginDirectoryEntry) in String(decoding: PluginDirectoryListing.encodeLine(entry), as: UTF8.self) }
        #expect(line(PluginDirectoryEntry(name: "notes.txt", type: .file, size: 1204,
                                          modificationDate: Date(timeIntervalSince1970: 1_763_800_000), permissions: 0o644))
            == #"{"modificationDate":"2025-11-22T08:26:40Z","name":"notes.txt","permissions":420,"size":1204,"type":"file"}"# + "\n")
        #expect(line(PluginDirectoryEntry(name: "docs", type: .directory, modificationDate: Date(timeIntervalSince1970: 1_763_800_000.25)))
            == #"{"modificationDate":"2025-11-22T08:26:40.250Z","name":"docs","type":"directory"}"# + "\n")
        #expect(line(PluginDirectoryEntry(name: "latest", type: .symbolicLink, symbolicLinkDestination: "docs/v2"))
            == #"{"name":"latest","symbolicLinkDestination":"docs/v2","type":"symbolicLink"}"# + "\n")
        #expect(line(PluginDirectoryEntry(name: "café \"q\"", type: .other)) == "{\"name\":\"café \\\"q\\\"\",\"type\":\"other\"}\n")
    }

    @Test func theKitNamesWhatCourierNames() {
        #expect(PluginDirectoryListing.mimeType == URLDirectoryListing.mimeType)
        #expect(PluginDirectoryEntry.EntryType.allCases.map(\.rawValue) == URLDirectoryEntry.EntryType.allCases.map(\.rawValue))
    }
}
