import Courier
import Foundation

/// One client connected to the agent: its socket, and a serial queue that writes what the agent
/// sends it, in the order the agent sent it (the agent queues messages while holding its lock, and
/// a slow client never blocks the agent).
final class AgentConnection: Sendable {
    let socket: AgentSocket
    private let writes = DispatchQueue(label: "courier.agent.client")

    init(socket: AgentSocket) {
        self.socket = socket
    }

    /// Queues `message`; a failed write closes the connection.
    func send(_ message: AgentServerMessage) {
        writes.async { [socket] in
            do {
                try socket.send(message)
            } catch {
                socket.close()
            }
        }
    }

    /// Queues a reply.
    func reply(_ requestID: UInt64, _ reply: AgentReply) {
        send(AgentServerMessage(.reply(requestID: requestID, reply)))
    }

    /// Queues an event.
    func event(_ event: AgentEvent) {
        send(AgentServerMessage(.event(event)))
    }
}
