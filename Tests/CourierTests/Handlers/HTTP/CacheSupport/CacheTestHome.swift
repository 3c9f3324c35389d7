import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

// Keeps every test away from the user's real cache directory.
//
// `URLCache.shared` (the cache of `URLSessionConfiguration.default` and `URLSession.shared`) keeps
// its disk store under `$XDG_CACHE_HOME`, else `~/.cache`. The cache tests use caches of their own
// in temporary directories, but any test that loads a cacheable `http:` response through a default
// session would write there. So, as `TestDataHome` does for the data directory, the test binary
// points `XDG_CACHE_HOME` at a fresh temporary directory before `main` runs (this function sits in
// the ELF `.init_array` section), and deletes it at exit.

#if compiler(>=6.3) && os(Linux)
/// Points `XDG_CACHE_HOME` at a new private temporary directory and removes it at exit.
@used @section(".init_array")
let courierTestCacheHomeInitializer: @convention(c) () -> Void = {
    let base = getenv("TMPDIR").map { String(cString: $0) }.flatMap { $0.hasPrefix("/") ? $0 : nil } ?? "/tmp"
    var template = Array("\(base)/\(CacheTestHome.directoryPrefix)XXXXXX".utf8CString)
    let created = template.withUnsafeMutableBufferPointer { buffer -> Bool in
        guard let start = buffer.baseAddress, mkdtemp(start) != nil else { return false }
        return setenv(CacheTestHome.variable, start, 1) == 0
    }
    // Without a temporary directory, point at one that cannot be created rather than at $HOME.
    if !created { setenv(CacheTestHome.variable, "/dev/null/courier-tests-cache", 1) }
    atexit {
        guard let value = getenv(CacheTestHome.variable) else { return }
        let path = String(cString: value)
        guard URL(fileURLWithPath: path).lastPathComponent.hasPrefix(CacheTestHome.directoryPrefix) else { return }
        try? FileManager.default.removeItem(atPath: path)
    }
}
#endif

/// Names the test binary's cache directory.
enum CacheTestHome {
    /// The variable `URLCache` reads for the user's cache directory.
    static let variable = "XDG_CACHE_HOME"

    /// How the temporary cache directory's name starts.
    static let directoryPrefix = "courier-tests-cache-"
}
