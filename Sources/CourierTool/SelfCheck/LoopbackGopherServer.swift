import Courier
import Foundation

/// The tiny gopher server (RFC 1436) the embedded default run starts inside the tool, on 127.0.0.1
/// and a port the system picks, for the gopher plugin's checks. One request per connection, as the
/// protocol has it: the client sends a selector line, the server answers and closes.
///
/// | selector | answer |
/// | --- | --- |
/// | empty | ``menu(port:)``: a menu naming the text file and a line of information |
/// | `/hello.txt` | ``text``, with a dot-stuffed line, then the `.` terminator |
/// | anything else | an error item (`3…`), as gopher servers answer a missing selector |
final class LoopbackGopherServer: Sendable {
    /// The text of `/hello.txt` as a client delivers it (unstuffed, without the terminator).
    static let text = "Hello from courier's loopback gopher server.\r\n.this line starts with a dot\r\n"

    /// The root menu, terminator included.
    static func menu(port: Int) -> String {
        "0Hello\t/hello.txt\t\(LoopbackListener.address)\t\(port)\r\n"
            + "iA gopher server inside courier's default run.\t\terror.host\t1\r\n"
            + ".\r\n"
    }

    /// `text` dot-stuffed and terminated, as it goes over the wire.
    static func wire(_ text: String) -> String {
        let lines = text.components(separatedBy: "\r\n").dropLast()
        return lines.map { $0.hasPrefix(".") ? "." + $0 : $0 }.map { $0 + "\r\n" }.joined() + ".\r\n"
    }

    /// The answer to `selector` (pure).
    static func respond(to selector: String, port: Int) -> String {
        switch selector {
        case "", "/":
            menu(port: port)
        case "/hello.txt":
            wire(text)
        default:
            "3'\(selector)' does not exist\t\terror.host\t1\r\n.\r\n"
        }
    }

    private let listener: LoopbackListener

    /// The server's port on 127.0.0.1.
    var port: Int { listener.port }

    /// Starts the server.
    /// - Throws: a `POSIXError` when no socket can be bound on 127.0.0.1.
    init() throws {
        // The port is known only once bound; each connection reads it from the box.
        let portBox = PortBox()
        listener = try LoopbackListener(name: "courier loopback gopher") { connection in
            guard let line = connection.readLine(limit: 4096) else { return }
            let selector = String(line.prefix { $0 != "\t" })
            connection.write(Self.respond(to: selector, port: portBox.port))
        }
        portBox.port = listener.port
    }

    /// Stops accepting, closes the open connections, and waits a bounded time for them.
    @discardableResult
    func stop() -> Bool { listener.stop() }
}

/// A port number set once, after the listener is bound and before any client learns it.
private final class PortBox: Sendable {
    private let value = Locked(0)
    var port: Int {
        get { value.withLock { $0 } }
        set { value.withLock { $0 = newValue } }
    }
}
