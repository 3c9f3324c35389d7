import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

// Keeps every test away from the user's real data directory.
//
// `HTTPCookieStorage.shared` and `URLCredentialStorage.shared` keep files in Courier's data
// directory, and any test that uses `URLSessionConfiguration.default` or `URLSession.shared`
// reaches them — in whatever order the tests happen to run. So the test binary points
// `COURIER_DATA_HOME` at a fresh temporary directory before `main` runs: this function sits in
// the ELF `.init_array` section, which the loader calls at start-up. The variable is inherited by
// subprocesses the tests start (the `courier` tool, for one), since every test target is linked
// into the same test binary. The directory is deleted at exit.

#if compiler(>=6.3) && os(Linux)
/// Points `COURIER_DATA_HOME` at a new private temporary directory and removes it at exit.
@used @section(".init_array")
let courierTestDataHomeInitializer: @convention(c) () -> Void = {
    let base = getenv("TMPDIR").map { String(cString: $0) }.flatMap { $0.hasPrefix("/") ? $0 : nil } ?? "/tmp"
    var template = Array("\(base)/\(TestDataHome.directoryPrefix)XXXXXX".utf8CString)
    let created = template.withUnsafeMutableBufferPointer { buffer -> Bool in
        guard let start = buffer.baseAddress, mkdtemp(start) != nil else { return false }
        return setenv(TestDataHome.variable, start, 1) == 0
    }
    // Without a temporary directory, point at one that cannot be created rather than at $HOME.
    if !created { setenv(TestDataHome.variable, "/dev/null/courier-tests", 1) }
    atexit {
        guard let value = getenv(TestDataHome.variable) else { return }
        let path = String(cString: value)
        guard URL(fileURLWithPath: path).lastPathComponent.hasPrefix(TestDataHome.directoryPrefix) else { return }
        try? FileManager.default.removeItem(atPath: path)
    }
}
#endif

/// Names the test binary's data directory.
enum TestDataHome {

    /// The variable Courier reads (`CourierDataDirectory.overrideVariable`).
    static let variable = "COURIER_DATA_HOME"

    /// How the temporary data directory's name starts.
    static let directoryPrefix = "courier-tests-data-"

    /// The directory the test binary's shared stores use.
    static var directory: URL? {
        ProcessInfo.processInfo.environment[variable].map { URL(fileURLWithPath: $0, isDirectory: true) }
    }
}
