import Courier
import Foundation

/// Counts bytes and drops them, keeping only the first few (the embedded default run measures bodies
/// and compares short ones).
final class CountingSink: OutputSink {
    private struct State {
        var count: Int64 = 0
        var sample = Data()
    }

    private let state = Locked(State())
    /// How many bytes of the start of the body ``sample`` keeps.
    let keeping: Int

    init(keeping: Int = 0) {
        self.keeping = keeping
    }

    /// The number of bytes written so far.
    var bytes: Int64 { state.withLock { $0.count } }

    /// The first ``keeping`` bytes written.
    var sample: Data { state.withLock { $0.sample } }

    func write(_ data: Data) throws {
        state.withLock { state in
            state.count += Int64(data.count)
            let room = keeping - state.sample.count
            if room > 0 { state.sample.append(data.prefix(room)) }
        }
    }

    func finish() throws {}
    func abort() {}
}
