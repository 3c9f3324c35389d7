import Foundation
import Testing
@testable import Courier

/// A Swift plugin needs the shared Swift runtime; a host that links its runtime statically (the
/// `courier` of `scripts/release`) refuses it before running any of its code. The ELF reader that
/// decides it works on the real plugin libraries and rejects malformed files without reading out
/// of bounds.
@Suite("Plugin Swift runtime check")
struct PluginSwiftRuntimeTests {
    @Test func theSwiftPluginNeedsTheSharedRuntimeAndACPluginBuiltByCDoesNot() throws {
        let zip = try ELFNeededLibraries.read(PluginProducts.zip)
        #expect(zip.contains("libswiftCore.so"))
        // A C plugin built by the system's C compiler (as the tests build their fixtures) needs libc only.
        let cPlugin = try ELFNeededLibraries.read(PluginProducts.noEntry)
        #expect(cPlugin.contains("libc.so.6"))
        #expect(!cPlugin.contains { $0.hasPrefix("libswift") })
        // SwiftPM links its Swift runtime stub into every product, C ones too: its gopher build needs
        // the shared runtime (`scripts/release` builds gopher with the C compiler for that reason).
        #expect(try ELFNeededLibraries.read(PluginProducts.gopher).contains("libswiftCore.so"))
    }

    @Test func thisTestProcessUsesTheSharedRuntime() {
        #expect(PluginSwiftRuntimeCheck.hostUsesSharedRuntime)
        #expect(PluginSwiftRuntimeCheck.problem(with: URL(fileURLWithPath: "/nonexistent")) == nil)
    }

    @Test func aStaticHostRefusesAPluginThatNeedsTheSharedRuntime() throws {
        let problem = try #require(PluginSwiftRuntimeCheck.problem(with: PluginProducts.zip, hostUsesSharedRuntime: false))
        #expect(problem.contains("two Swift runtimes cannot share one process"))
        let cPlugin = try PluginProducts.noEntry
        #expect(PluginSwiftRuntimeCheck.problem(with: cPlugin, hostUsesSharedRuntime: false) == nil)
    }

    @Test func malformedFilesThrowInsteadOfReadingOutOfBounds() throws {
        let real = try Data(contentsOf: PluginProducts.gopher)
        #expect(throws: ELFNeededLibraries.Malformed.self) { try ELFNeededLibraries.parse(Data("#!/bin/sh\n".utf8)) }
        // Every truncation of the headers, and one in the middle of the file, fails cleanly.
        for length in [0, 4, 63, 64, 200, real.count / 2] {
            let truncated = real.prefix(length)
            if length < 64 {
                #expect(throws: ELFNeededLibraries.Malformed.self) { try ELFNeededLibraries.parse(truncated) }
            } else {
                // Past the ELF header the result depends on where the cut falls, but it never traps.
                _ = try? ELFNeededLibraries.parse(truncated)
            }
        }
        // A program header table pointing past the end of the file.
        var broken = real
        broken.replaceSubrange(32..<40, with: [0xF0, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F])
        #expect(throws: ELFNeededLibraries.Malformed.self) { try ELFNeededLibraries.parse(broken) }
        // A 32-bit ELF file is not read.
        var thirtyTwoBit = real
        thirtyTwoBit[4] = 1
        #expect(throws: ELFNeededLibraries.Malformed.self) { try ELFNeededLibraries.parse(thirtyTwoBit) }
    }
}
