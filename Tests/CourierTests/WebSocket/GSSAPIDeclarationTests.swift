import Foundation
import Testing

/// Courier loads GSS-API at run time and declares the few RFC 2744 types and constants it uses
/// itself (`Sources/CGSSAPI`), so building it needs no Kerberos headers. This suite compiles
/// `gssapi_declarations_check.c` against MIT Kerberos' real headers (libkrb5-dev, which
/// `scripts/setup` installs for the tests) and runs it: every size, offset, flag, status and OID
/// must match.
@Suite("GSS-API declarations")
struct GSSAPIDeclarationTests {
    private static let here = URL(fileURLWithPath: #filePath).deletingLastPathComponent()

    @Test func courierDeclarationsMatchMITKerberosHeaders() throws {
        let check = Self.here.appendingPathComponent("gssapi_declarations_check.c").path
        let include = Self.here.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Sources/CGSSAPI/include").path
        let program = FileManager.default.temporaryDirectory.appendingPathComponent("courier-gssapi-check-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: program) }
        let compiled = try TestChildProcess.run("/usr/bin/cc", ["-std=c11", "-Wall", "-Werror", "-I", include, check,
                                                               "-o", program, "-lgssapi_krb5"], timeout: 60)
        try #require(compiled.status == 0, "the check did not compile: \(compiled.output)")
        let ran = try TestChildProcess.run(program, [], timeout: 30)
        #expect(ran.status == 0, "CGSSAPI's declarations differ from <gssapi/gssapi.h>: \(ran.output)")
    }
}
