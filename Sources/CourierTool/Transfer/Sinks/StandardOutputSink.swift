import Foundation

/// Writes to standard output, unbuffered, so `-o -` and the default output stream as the body arrives.
struct StandardOutputSink: OutputSink {
    func write(_ data: Data) throws { try Console.writeOut(data) }
    func finish() throws {}
    func abort() {}
}
