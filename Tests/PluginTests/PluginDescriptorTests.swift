import CourierPluginABI
import Foundation
import Testing
@testable import Courier

/// Reading what crosses the C boundary — descriptors and responses — field by field, with
/// malformed values built in memory.
@Suite("Plugin descriptors and responses")
struct PluginDescriptorTests {
    private static let handlers: courier_handler_table = courier_handler_table(
        struct_size: UInt32(MemoryLayout<courier_handler_table>.size),
        create: { _, _, _ in nil }, start: { _ in }, stop: { _ in }, destroy: { _ in }, resume_producing: nil)

    /// Runs `body` with a descriptor for one scheme, `test`, after `change` edited it.
    private func withDescriptor<T>(_ change: (inout courier_plugin_descriptor) -> Void = { _ in },
                                   handlers: courier_handler_table = Self.handlers,
                                   _ body: (UnsafeRawPointer) -> T) -> T {
        "test".withCString { scheme in
            "fixture".withCString { name in
                "1.0".withCString { version in
                    var schemes = [courier_scheme(name: scheme, capabilities: UInt32(COURIER_CAPABILITY_READ) | 1 << 30)]
                    var table = handlers
                    return schemes.withUnsafeMutableBufferPointer { list in
                        withUnsafePointer(to: &table) { tablePointer in
                            var descriptor = courier_plugin_descriptor(
                                abi_version: UInt32(COURIER_PLUGIN_ABI_VERSION),
                                struct_size: UInt32(MemoryLayout<courier_plugin_descriptor>.size),
                                name: name, version: version, schemes: UnsafePointer(list.baseAddress),
                                scheme_count: 1, handlers: tablePointer)
                            change(&descriptor)
                            return withUnsafePointer(to: &descriptor) { body(UnsafeRawPointer($0)) }
                        }
                    }
                }
            }
        }
    }

    private func reason(_ result: Result<PluginDescriptor, PluginLoadError.Reason>) -> PluginLoadError.Reason? {
        if case .failure(let reason) = result { return reason }
        return nil
    }

    @Test func aWellFormedDescriptorIsRead() throws {
        let descriptor = try withDescriptor { PluginDescriptor.read($0) }.get()
        #expect(descriptor.name == "fixture")
        #expect(descriptor.version == "1.0")
        // Capability bits this host does not know are ignored.
        #expect(descriptor.schemes == [LoadedPlugin.Scheme(name: "test", capabilities: .read)])
        #expect(descriptor.functions.resumeProducing == nil)
        let manifest = PluginManifest(name: "fixture", version: "1.0", abiVersion: 1, library: "libx.so",
                                      schemes: [LoadedPlugin.Scheme(name: "test", capabilities: .read)])
        #expect(descriptor.disagreement(with: manifest) == nil)
        var other = manifest
        other.schemes = [LoadedPlugin.Scheme(name: "test", capabilities: [.read, .write])]
        #expect(descriptor.disagreement(with: other)?.contains("schemes") == true)
    }

    @Test func malformedDescriptorsAreRefused() {
        let cases: [(String, (inout courier_plugin_descriptor) -> Void)] = [
            ("NULL name", { $0.name = nil }),
            ("NULL version", { $0.version = nil }),
            ("no schemes", { $0.scheme_count = 0 }),
            ("NULL schemes", { $0.schemes = nil }),
            ("too many schemes", { $0.scheme_count = 1000 }),
            ("NULL handler table", { $0.handlers = nil }),
            ("struct_size too small", { $0.struct_size = 8 }),
        ]
        for (what, change) in cases {
            let result = withDescriptor(change) { PluginDescriptor.read($0) }
            guard case .invalidDescriptor? = reason(result) else {
                Issue.record("\(what): expected invalidDescriptor, got \(result)")
                continue
            }
        }
        let future = withDescriptor({ $0.abi_version = 2 }) { PluginDescriptor.read($0) }
        #expect(reason(future) == .unsupportedABIVersion(found: 2, supported: 1...1))
    }

    @Test func handlerTablesNeedTheRequiredFunctions() {
        var noDestroy = Self.handlers
        noDestroy.destroy = nil
        guard case .invalidDescriptor? = reason(withDescriptor(handlers: noDestroy) { PluginDescriptor.read($0) }) else {
            Issue.record("a table without destroy was accepted")
            return
        }
        var short = Self.handlers
        short.struct_size = 8
        guard case .invalidDescriptor? = reason(withDescriptor(handlers: short) { PluginDescriptor.read($0) }) else {
            Issue.record("a table too short for its required functions was accepted")
            return
        }
    }

    @Test func anInvalidSchemeInTheDescriptorIsRefused() {
        let result = "Not A Scheme".withCString { bad in
            withDescriptor({ descriptor in
                // Replace the scheme array's only entry.
                let list = UnsafeMutablePointer(mutating: descriptor.schemes!)
                list.pointee.name = bad
            }) { PluginDescriptor.read($0) }
        }
        #expect(reason(result) == .invalidScheme("Not A Scheme"))
    }

    @Test func responsesAreCheckedFieldByField() throws {
        let url = URL(string: "test://host/resource")!
        func decode(_ change: (inout courier_response) -> Void) -> Result<URLResponse, PluginViolation> {
            var response = courier_response()
            response.struct_size = UInt32(MemoryLayout<courier_response>.size)
            response.expected_length = -1
            change(&response)
            return withUnsafePointer(to: &response) { PluginResponseDecoding.response($0, requestURL: url) }
        }
        let plain = try decode { _ in }.get()
        #expect(plain.url == url && plain.expectedContentLength == -1 && !(plain is HTTPURLResponse))
        #expect((try? decode { $0.struct_size = 4 }.get()) == nil)
        #expect((try? decode { $0.status_code = 600 }.get()) == nil)
        #expect((try? decode { $0.status_code = 200; $0.header_count = 3 }.get()) == nil, "headers at NULL")
        let badName = "Bad Name".withCString { name in
            "v".withCString { value in
                var header = courier_header(name: name, value: value)
                return withUnsafePointer(to: &header) { pointer in
                    decode { $0.status_code = 200; $0.headers = pointer; $0.header_count = 1 }
                }
            }
        }
        #expect((try? badName.get()) == nil)
        let badURL = "not a url".withCString { text in decode { $0.url = text } }
        #expect((try? badURL.get()) == nil)
        let http = try "text/html".withCString { mime in
            try decode { $0.status_code = 404; $0.mime_type = mime; $0.expected_length = 12 }.get()
        }
        let response = try #require(http as? HTTPURLResponse)
        #expect(response.statusCode == 404)
        #expect(response.value(forHTTPHeaderField: "Content-Type") == "text/html")
        #expect(response.expectedContentLength == 12)
    }

    @Test func errorCodesFromPluginsAreChecked() {
        #expect(PluginErrorCodes.code(-1100).code == .fileDoesNotExist)
        #expect(PluginErrorCodes.code(-1100).known)
        #expect(PluginErrorCodes.code(-999).code == .cancelled)
        for bad: Int32 in [0, 42, -4242, Int32.min] {
            #expect(PluginErrorCodes.code(bad).code == .unknown)
            #expect(!PluginErrorCodes.code(bad).known)
        }
    }
}
