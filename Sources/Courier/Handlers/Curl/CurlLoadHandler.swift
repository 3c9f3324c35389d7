import Foundation

/// A handler whose load runs through a ``CurlLoad``: the delegate of its transfers, which also
/// hands the load its client already cast to the task's ``BuiltInHandlerClient``.
///
/// The handler casts its `client` once, when it is made (it needs the configuration then anyway),
/// so the per-response and per-body paths of the load do not each pay a protocol cast (a
/// conformance look-up, about 280 instructions). Courier never assigns a built-in handler's
/// `client` after `init`, so the cast stays the same object as `client`.
protocol CurlLoadHandler: CurlTransferDelegate {
    /// `client` as the task's ``BuiltInHandlerClient``, or `nil` for any other client.
    var builtInClient: (any BuiltInHandlerClient)? { get }
}
