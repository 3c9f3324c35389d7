import Foundation
import Testing
@testable import Courier

/// The example plugins and the misbehaving and redirecting fixtures, installed once per test process into one
/// directory and loaded into Courier's process-wide loader — the one URL sessions use. (Loading a
/// second copy of a library would be refused as a duplicate scheme, so every test shares this one.)
enum InstalledPlugins {
    struct Installation: Sendable {
        let directory: URL
        let report: PluginLoadReport
    }

    private static let installation: Result<Installation, InstallError> = {
        do {
            let directory = try PluginDirectory()
            try directory.addLibrary(PluginProducts.gopher)
            try directory.addManifest(PluginProducts.manifest("Gopher"), as: "gopher.json")
            try directory.addLibrary(PluginProducts.zip)
            try directory.addManifest(PluginProducts.manifest("Zip"), as: "zip.json")
            try directory.addLibrary(PluginProducts.misbehaving)
            try directory.writeManifest("misbehaving.json", plugin: "misbehaving", version: "0.1",
                                        library: "libCourierTestPluginMisbehaving.so",
                                        schemes: MisbehavingSchemes.all.map { ($0, $0 == "misbehave-echo" ? ["read", "write"] : ["read"]) })
            try directory.addLibrary(PluginProducts.redirecting)
            try directory.writeManifest("redirecting.json", plugin: "redirecting", version: "0.1",
                                        library: "libCourierTestPluginRedirecting.so",
                                        schemes: [("redirecting", ["read"]), ("redirecting-alt", ["read"])])
            let report = CourierPlugins.load(directory: directory.url)
            return .success(Installation(directory: directory.url, report: report))
        } catch {
            return .failure(InstallError(description: "\(error)"))
        }
    }()

    struct InstallError: Error, CustomStringConvertible {
        var description: String
    }

    /// Installs (once) and returns the installation; fails the test when a plugin was refused.
    @discardableResult
    static func install() throws -> Installation {
        let installed = try installation.get()
        try #require(installed.report.failures.isEmpty, "plugins refused: \(installed.report.failures)")
        return installed
    }
}

/// The schemes of the misbehaving fixture (`Tests/PluginFixtures/Misbehaving/misbehaving.c`).
enum MisbehavingSchemes {
    static let all = ["misbehave-twice", "misbehave-null", "misbehave-nulldata", "misbehave-badcode",
                      "misbehave-badstatus", "misbehave-noresponse", "misbehave-http", "misbehave-redirect",
                      "misbehave-badredirect", "misbehave-nocreate", "misbehave-late", "misbehave-hang",
                      "misbehave-echo"]
}
