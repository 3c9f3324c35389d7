import Foundation

/// A built-in handler that continues a partial download from the offset and validator a resumed
/// download task passes it (``ResumeRequest``). Resume data whose URL no such handler (nor a plugin
/// that declared `resume`) serves is refused (``ProtocolResolver/resumesDownloads(of:)``).
protocol DownloadResumingHandler: SchemeHandler {}
