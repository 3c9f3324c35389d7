import Foundation

/// Temporary files with known contents for `file:` loads. Each test makes its own and removes it.
enum TestFiles {
    /// `count` bytes of a pattern that repeats every 65,521 bytes (a prime, so it never lines up
    /// with power-of-two chunk sizes): a splice at the wrong offset changes the content.
    static func bytes(count: Int, seed: UInt64 = 1) -> Data {
        let period = 65_521
        var generator = seed &* 0x9E37_79B9_7F4A_7C15 | 1
        var block = [UInt8](repeating: 0, count: period)
        for index in 0..<period {
            generator ^= generator << 13
            generator ^= generator >> 7
            generator ^= generator << 17
            block[index] = UInt8(truncatingIfNeeded: generator)
        }
        var data = Data(capacity: count)
        while data.count < count {
            let take = min(period, count - data.count)
            block.withUnsafeBufferPointer { data.append($0.baseAddress!, count: take) }
        }
        return data
    }

    /// A new directory for one test.
    static func makeDirectory() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-tests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    /// Writes `data` to a new file (in a new directory) and returns its URL; remove it with
    /// ``remove(_:)``.
    static func make(_ data: Data, name: String = "body.bin") throws -> URL {
        let url = try makeDirectory().appendingPathComponent(name)
        try data.write(to: url)
        return url
    }

    /// Removes a file made by ``make(_:name:)`` together with its directory.
    static func remove(_ url: URL) {
        try? FileManager.default.removeItem(at: url.deletingLastPathComponent())
    }
}
