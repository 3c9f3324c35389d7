/// A server the default run starts on 127.0.0.1 for its checks (``LoopbackServer``,
/// ``LoopbackGopherServer``).
protocol LoopbackService {
    /// The port it listens on.
    var port: Int { get }
    /// Stops it, waiting a bounded time for its connections; whether they all ended in time.
    @discardableResult
    func stop() -> Bool
}

extension LoopbackServer: LoopbackService {}
extension LoopbackGopherServer: LoopbackService {}
