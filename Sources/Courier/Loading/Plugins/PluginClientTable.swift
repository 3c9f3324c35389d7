import Foundation
internal import CourierPluginABI

/// The one `courier_client` table Courier gives every plugin handler, and the registry that maps
/// the opaque context token passed with it to the load it belongs to.
///
/// The table lives for the whole process and the token is a number, never a pointer, so a plugin
/// that calls the client late — after finishing, after `destroy` — reaches a lookup that finds
/// nothing, not freed memory.
final class PluginClientTable: Sendable {
    /// The process's table and registry.
    static let shared = PluginClientTable()

    private let table: UncheckedSendable<UnsafeMutablePointer<courier_client>>
    private let connections = Locked<(next: UInt, byToken: [UInt: PluginConnection])>((1, [:]))

    private init() {
        let table = UnsafeMutablePointer<courier_client>.allocate(capacity: 1)
        table.initialize(to: courier_client(
            struct_size: UInt32(MemoryLayout<courier_client>.size),
            received_response: { context, response in
                PluginClientTable.shared.connection(context)?.receivedResponse(response)
            },
            received_data: { context, bytes, length in
                PluginClientTable.shared.connection(context)?.receivedData(bytes, length: length)
            },
            redirected: { context, url, response in
                PluginClientTable.shared.connection(context)?.redirected(to: url, response: response)
            },
            finished: { context in
                PluginClientTable.shared.connection(context)?.finished()
            },
            failed: { context, code, message in
                PluginClientTable.shared.connection(context)?.failed(code: code, message: message)
            },
            can_accept_more_data: { context in
                PluginClientTable.shared.connection(context)?.canAcceptMoreData() == true ? 1 : 0
            },
            resumed: { context, offset, total in
                PluginClientTable.shared.connection(context)?.resumed(atOffset: offset, expectedTotal: total)
            },
            set_resume_validator: { context, validator in
                PluginClientTable.shared.connection(context)?.setResumeValidator(validator)
            },
            sent_body_data: { context, sent, total, expected in
                PluginClientTable.shared.connection(context)?.sentBodyData(sent, total: total, expected: expected)
            }
        ))
        self.table = UncheckedSendable(table)
    }

    /// The table passed to every `create`.
    var pointer: UnsafePointer<courier_client> { UnsafePointer(table.value) }

    /// Registers `connection`; the returned token is the `context` passed with the table.
    func register(_ connection: PluginConnection) -> UInt {
        connections.withLock { state in
            let token = state.next
            state.next &+= 1
            if state.next == 0 { state.next = 1 }
            state.byToken[token] = connection
            return token
        }
    }

    /// Forgets a token: later calls with it are ignored.
    func unregister(_ token: UInt) {
        _ = connections.withLock { $0.byToken.removeValue(forKey: token) }
    }

    /// The connection a plugin's `context` stands for, or nil for an unknown or stale token.
    func connection(_ context: UnsafeMutableRawPointer?) -> PluginConnection? {
        let token = UInt(bitPattern: context)
        guard token != 0 else { return nil }
        return connections.withLock { $0.byToken[token] }
    }

    /// The number of registered connections (for tests).
    var connectionCount: Int { connections.withLock { $0.byToken.count } }
}
