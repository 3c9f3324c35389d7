// The benchmark's command-line options (see Bench.swift).

#if USE_COURIER
import Courier
#else
import FoundationNetworking
#endif
import Foundation
import Dispatch
import Synchronization

// MARK: - Options

struct Options {
    var command = ""
    var count: Int?
    var window: Int?
    var file: String?
    var url: URL?
    var size: Int?
    var timeout: Double = 300
    /// `--background IDENTIFIER`: run http-download in a background session with this identifier.
    var background: String?
    /// `--async 1`: http-get awaits `data(from:)` instead of using completion handlers (window 1 only).
    var async = false

    static func parse(_ arguments: [String]) -> Options? {
        var options = Options()
        var rest = arguments.makeIterator()
        guard let command = rest.next() else { return nil }
        options.command = command
        while let flag = rest.next() {
            guard let value = rest.next() else { return nil }
            switch flag {
            case "--count": guard let n = Int(value), n > 0 else { return nil }; options.count = n
            case "--window": guard let n = Int(value), n > 0 else { return nil }; options.window = n
            case "--file": options.file = value
            case "--url": guard let url = URL(string: value) else { return nil }; options.url = url
            case "--size": guard let n = Int(value), n > 0 else { return nil }; options.size = n
            case "--timeout": guard let s = Double(value), s > 0 else { return nil }; options.timeout = s
            case "--background": guard !value.isEmpty else { return nil }; options.background = value
            case "--async": options.async = value == "1"
            default: return nil
            }
        }
        return options
    }
}
